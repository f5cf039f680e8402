"""Split long text into overlapping chunks that fit an embedding model's input.

Chunking works on *token spans*: the ``(start, end)`` character offsets of each
token in the text, special tokens left out, as an embedder's ``token_spans``
gives them. Cutting between two spans and slicing the original string keeps the
text exactly as written (no detokenisation), and every chunk re-tokenises to at
most ``max_tokens`` tokens, give or take a sub-word merge at the cut.

Where a window of ``max_tokens`` must end, the cut goes to the best boundary in
the window's second half: a paragraph break, then a sentence end, then a line
break, then whitespace, then punctuation, and only as a last resort the middle
of a word (a run of text with no spaces, such as a long URL).

Without a tokenizer, :func:`approximate_token_spans` stands in for one.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

TokenSpan = tuple[int, int]
"""One token as ``(start, end)`` character offsets into the text it came from."""

TokenSpans = Callable[[str], Sequence[TokenSpan]]
"""A tokenizer reduced to what chunking needs: text in, one span per token out."""

# Scripts written without spaces, where WordPiece and BPE tokenizers emit about
# one token per character.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"

# Word runs are cut every 4 characters: against all-MiniLM-L6-v2's WordPiece this
# counts 1.0-1.2 tokens per real token on English prose and code (and about
# 4 characters per token, the usual rule for OpenAI's BPE), so an estimated chunk
# rarely outgrows the model's real limit.
_APPROXIMATE_TOKEN = re.compile(rf"[{_CJK}]|(?:(?![{_CJK}])\w){{1,4}}|[^\w\s]")
_CJK_CHAR = re.compile(f"[{_CJK}]")

# Full-width sentence ends (ideographic full stop, exclamation and question marks)
# need no space after them; closing quotes and brackets may follow a sentence end.
_FULL_WIDTH_END = frozenset("\u3002\uff01\uff1f")
_SENTENCE_END = frozenset(".!?\u2026") | _FULL_WIDTH_END
_CLOSERS = "\"')]}\u00bb\u201d\u2019"

# Boundary ranks, best last.
_MID_WORD, _PUNCTUATION, _SPACE, _LINE, _SENTENCE, _PARAGRAPH = range(6)


def approximate_token_spans(text: str) -> list[TokenSpan]:
    """Spans of approximate tokens, for when no model tokenizer is at hand.

    Each punctuation mark, each CJK character and each run of up to four word
    characters counts as one token. That errs towards counting too many, so a
    chunk cut by the estimate stays within a real model's input.
    """
    return [match.span() for match in _APPROXIMATE_TOKEN.finditer(text)]


def chunk_text(
    text: str,
    *,
    max_tokens: int,
    overlap_tokens: int = 0,
    token_spans: TokenSpans | None = None,
) -> list[str]:
    """Split ``text`` into chunks of at most ``max_tokens`` tokens each.

    Consecutive chunks share up to ``overlap_tokens`` tokens, so the context of a
    cut carries over into the next chunk. The overlap starts at a word boundary,
    which can make it a little shorter than asked.

    Args:
        text: The text to split.
        max_tokens: The most tokens a chunk may hold (special tokens not counted).
        overlap_tokens: Tokens repeated from the end of one chunk at the start
            of the next; smaller than ``max_tokens``.
        token_spans: The model's tokenizer as a span function (an embedder's
            ``token_spans``); :func:`approximate_token_spans` when ``None``.

    Returns:
        The chunks in order, each a slice of ``text`` from its first token's
        start to its last token's end, so without surrounding whitespace. One
        chunk when the text fits; none when it has no tokens (blank text).

    Raises:
        ValueError: ``max_tokens`` below 1, or ``overlap_tokens`` not in
            ``[0, max_tokens)``.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be at least 1, got {max_tokens}")
    if not 0 <= overlap_tokens < max_tokens:
        raise ValueError(f"overlap_tokens must be in [0, {max_tokens}), got {overlap_tokens}")

    spans = list((token_spans or approximate_token_spans)(text))
    if not spans:
        return []
    count = len(spans)
    if count <= max_tokens:
        return [text[spans[0][0] : spans[-1][1]]]

    # A cut never comes so early that the overlap would swallow the whole chunk,
    # so every chunk moves the start forward.
    min_length = max(1, max_tokens // 2, overlap_tokens + 1)
    chunks: list[str] = []
    start = 0
    while start + max_tokens < count:
        end = _best_cut(text, spans, start + min_length, start + max_tokens)
        chunks.append(text[spans[start][0] : spans[end - 1][1]])
        start = _overlap_start(text, spans, end, overlap_tokens)
    chunks.append(text[spans[start][0] : spans[-1][1]])
    return chunks


def _best_cut(text: str, spans: Sequence[TokenSpan], lowest: int, highest: int) -> int:
    """The token index in ``[lowest, highest]`` to cut before: the best boundary, the latest on ties."""
    best, best_rank = highest, -1
    for index in range(highest, lowest - 1, -1):
        rank = _boundary_rank(text, spans[index - 1][1], spans[index][0])
        if rank > best_rank:
            best, best_rank = index, rank
            if rank == _PARAGRAPH:
                break
    return best


def _overlap_start(text: str, spans: Sequence[TokenSpan], end: int, overlap_tokens: int) -> int:
    """Where the chunk after a cut at ``end`` starts: ``overlap_tokens`` back, moved up to a word start.

    Opening a chunk with a word fragment or a stray comma would blur its vector,
    so the overlap shrinks to the first word start within it, failing that to
    the first clean boundary, and failing that (one long word) to nothing.
    """
    first = end - overlap_tokens
    ranks = [_boundary_rank(text, spans[index - 1][1], spans[index][0]) for index in range(first, end)]
    for wanted in (_SPACE, _PUNCTUATION):
        for offset, rank in enumerate(ranks):
            if rank >= wanted:
                return first + offset
    return end


def _boundary_rank(text: str, left_end: int, right_start: int) -> int:
    """How good a place to cut is the gap between one token ending and the next starting."""
    gap = text[left_end:right_start]
    if gap.count("\n") >= 2:
        return _PARAGRAPH
    before = _last_char_before_closers(text, left_end)
    if before in _FULL_WIDTH_END or (gap and before in _SENTENCE_END):
        return _SENTENCE
    # A lone line break ends a list item or a line of code, or merely wraps prose:
    # better than a space, not as good as a sentence end.
    if "\n" in gap:
        return _LINE
    if gap:
        return _SPACE
    # Overlapping spans (byte-level BPE splitting one character) are never a clean cut.
    if right_start < left_end:
        return _MID_WORD
    left, right = text[left_end - 1 : left_end], text[right_start : right_start + 1]
    if _is_word_char(left) and _is_word_char(right):
        return _MID_WORD
    return _PUNCTUATION


def _last_char_before_closers(text: str, end: int) -> str:
    """The last character before ``end`` that is not a closing quote or bracket ('' if none)."""
    index = end - 1
    while index >= 0 and text[index] in _CLOSERS:
        index -= 1
    return text[index] if index >= 0 else ""


def _is_word_char(char: str) -> bool:
    # CJK characters are words on their own: a cut between two of them is clean.
    return char.isalnum() and not _CJK_CHAR.match(char)


BATCH_CHARS = 2048
"""Most characters (about 500 tokens) of padded text in one inference call, however many texts.

A call's buffers grow with its padded text (8 texts of 256 tokens took 130 MB more, 2 took
50 MB; with onnxruntime's arena, which is off now, they stayed), while chat turns of 8 to a
batch stay far below this and embed as fast as in bigger batches (16 and 32 measured no
faster per CPU second).
"""


def inference_batches(order: Sequence[int], texts: Sequence[str], most: int) -> list[list[int]]:
    """``order`` (positions by rising text length) cut into batches of at most ``most`` texts
    and at most ``BATCH_CHARS`` of padded text (each batch is padded to its last, longest, text)."""
    batches: list[list[int]] = []
    current: list[int] = []
    for i in order:
        if current and (len(current) == most or (len(current) + 1) * len(texts[i]) > BATCH_CHARS):
            batches.append(current)
            current = []
        current.append(i)
    if current:
        batches.append(current)
    return batches
