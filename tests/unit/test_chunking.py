"""chunk_text and approximate_token_spans on literal inputs, with literal tokenizers."""

from __future__ import annotations

import re

import pytest

from hybrid_memory.embeddings.chunking import TokenSpan, approximate_token_spans, chunk_text


def word_spans(text: str) -> list[TokenSpan]:
    """One token per run of non-space characters."""
    return [match.span() for match in re.finditer(r"\S+", text)]


def char_spans(text: str) -> list[TokenSpan]:
    """One token per non-space character, like a tokenizer that splits every word apart."""
    return [match.span() for match in re.finditer(r"\S", text)]


def test_text_that_fits_is_one_chunk_without_surrounding_whitespace() -> None:
    assert chunk_text("  Hello there.\n", max_tokens=5, token_spans=word_spans) == ["Hello there."]


@pytest.mark.parametrize("text", ["", "   ", "\n\t\n"])
def test_blank_text_has_no_chunks(text: str) -> None:
    assert chunk_text(text, max_tokens=5, token_spans=word_spans) == []


def test_cut_goes_to_the_sentence_end_rather_than_the_limit() -> None:
    text = "One two three. Four five six seven eight"

    assert chunk_text(text, max_tokens=6, token_spans=word_spans) == [
        "One two three.",
        "Four five six seven eight",
    ]


def test_paragraph_break_beats_a_later_sentence_end() -> None:
    text = "a b c\n\nd e. f g h i"

    assert chunk_text(text, max_tokens=6, token_spans=word_spans) == ["a b c", "d e. f g h i"]


def test_line_break_beats_a_later_space() -> None:
    text = "alpha beta\ngamma delta epsilon zeta"

    assert chunk_text(text, max_tokens=4, token_spans=word_spans) == [
        "alpha beta",
        "gamma delta epsilon zeta",
    ]


def test_sentence_end_behind_a_closing_quote_counts() -> None:
    text = 'He said "stop." Then left quietly now'

    assert chunk_text(text, max_tokens=5, token_spans=word_spans) == [
        'He said "stop."',
        "Then left quietly now",
    ]


def test_cut_never_falls_in_the_first_half_of_a_window() -> None:
    text = "One. two three four five six seven"

    assert chunk_text(text, max_tokens=6, token_spans=word_spans) == ["One. two three four five six", "seven"]


def test_full_width_sentence_end_needs_no_space() -> None:
    text = "今日は晴れ。明日は雨です"

    assert chunk_text(text, max_tokens=8) == ["今日は晴れ。", "明日は雨です"]


def test_text_between_tokens_is_kept_verbatim() -> None:
    text = "Hello,   world!\tBye"

    assert chunk_text(text, max_tokens=2, token_spans=word_spans) == ["Hello,   world!", "Bye"]


def test_overlap_repeats_the_last_tokens() -> None:
    text = "w1 w2 w3 w4 w5 w6 w7 w8 w9 w10"

    assert chunk_text(text, max_tokens=4, overlap_tokens=1, token_spans=word_spans) == [
        "w1 w2 w3 w4",
        "w4 w5 w6 w7",
        "w7 w8 w9 w10",
    ]


def test_overlap_shrinks_to_start_at_a_word() -> None:
    assert chunk_text("hello world again", max_tokens=8, overlap_tokens=6, token_spans=char_spans) == [
        "hello wor",
        "world aga",
        "again",
    ]


def test_overlap_inside_one_word_is_dropped() -> None:
    assert chunk_text("hello world again", max_tokens=8, overlap_tokens=3, token_spans=char_spans) == [
        "hello",
        "world",
        "again",
    ]


def test_word_without_spaces_is_cut_mid_word_as_a_last_resort() -> None:
    assert chunk_text("abcdefghij", max_tokens=4, token_spans=char_spans) == ["abcd", "efgh", "ij"]


def test_punctuation_is_a_better_cut_than_mid_word() -> None:
    assert chunk_text("abc,def", max_tokens=5, token_spans=char_spans) == ["abc,", "def"]


def test_every_chunk_fits_and_together_they_cover_the_text() -> None:
    words = [f"w{index}" + ("." if index % 7 == 6 else "") for index in range(200)]
    text = " ".join(words)

    chunks = chunk_text(text, max_tokens=16, overlap_tokens=4, token_spans=word_spans)

    assert all(1 <= len(word_spans(chunk)) <= 16 for chunk in chunks)
    assert chunks[0].startswith("w0 ")
    assert chunks[-1].endswith(" w199")
    covered: list[str] = []
    for chunk in chunks:
        chunk_words = chunk.split()
        # Each chunk starts inside (or right after) what the previous ones covered.
        overlap = len(covered) - words.index(chunk_words[0])
        assert 0 <= overlap <= 4
        covered += chunk_words[overlap:]
    assert covered == words


def test_without_a_tokenizer_the_estimate_is_used() -> None:
    assert chunk_text("Cats sleep. Dogs bark loudly.", max_tokens=5) == ["Cats sleep.", "Dogs bark loudly."]


def test_approximate_spans_split_words_every_four_characters_and_punctuation_apart() -> None:
    text = "Hello, world! Don't"

    spans = approximate_token_spans(text)

    assert [text[start:end] for start, end in spans] == ["Hell", "o", ",", "worl", "d", "!", "Don", "'", "t"]


def test_approximate_spans_count_each_cjk_character() -> None:
    assert approximate_token_spans("日本語 ok") == [(0, 1), (1, 2), (2, 3), (4, 6)]


@pytest.mark.parametrize(
    ("max_tokens", "overlap_tokens", "message"),
    [
        (0, 0, "max_tokens must be at least 1, got 0"),
        (4, 4, r"overlap_tokens must be in \[0, 4\), got 4"),
        (4, -1, r"overlap_tokens must be in \[0, 4\), got -1"),
    ],
)
def test_invalid_limits_are_refused(max_tokens: int, overlap_tokens: int, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{message}$"):
        chunk_text("some text", max_tokens=max_tokens, overlap_tokens=overlap_tokens)
