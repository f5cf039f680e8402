"""The text the model reads and the budget that bounds it, on literal results and a word tokenizer."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hybrid_memory.models import (
    Link,
    MemoryKind,
    Neighbourhood,
    Note,
    NoteType,
    RecallHit,
    RecallResult,
    Relation,
    RememberResult,
    ThreadInfo,
    ThreadList,
)
from hybrid_memory.tools import render
from hybrid_memory.tools._present import present
from hybrid_memory.tools.budget import bound, cut, water_level

DAY = datetime(2024, 5, 1, 9, 30, tzinfo=UTC)


class Words:
    """A tokenizer where every run of non-space characters is one token."""

    def count_tokens(self, text: str) -> int:
        return len(self.token_spans(text))

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [m.span() for m in re.finditer(r"\S+", text)]


def hit(memory_id: str, text: str, **fields: object) -> RecallHit:
    defaults: dict[str, object] = {
        "kind": MemoryKind.MESSAGE,
        "score": 0.8,
        "created_at": DAY,
        "channels": ["dense", "keyword"],
        "ranks": {"dense": 1, "keyword": 3},
        "relevance": 0.9,
        "recency": 0.4,
    }
    return RecallHit(id=memory_id, text=text, **{**defaults, **fields})  # type: ignore[arg-type]


def test_a_message_hit_is_one_line_with_citation_role_day_thread_and_text() -> None:
    line = render.hit_line(hit("m-1", "I adopted a beagle.", role="user", thread_id="t-1", message_id="x"))
    assert line == "[memory:m-1] user 2024-05-01 in t-1: I adopted a beagle."


def test_a_note_hit_names_its_type_and_tags_and_leaves_out_empty_fields() -> None:
    note = hit("n-1", "Biscuit is a beagle.", kind=MemoryKind.NOTE, note_type=NoteType.FACT, tags=["dog"])
    assert render.hit_line(note) == "[memory:n-1] fact note 2024-05-01 #dog: Biscuit is a beagle."


def test_explain_adds_why_a_hit_ranked() -> None:
    line = render.hit_line(hit("m-1", "text", role="user"), explain=True)
    assert line == (
        "[memory:m-1] user 2024-05-01: text (score 0.80; dense#1 keyword#3; relevance 0.90, recency 0.40)"
    )


def test_a_recall_says_what_was_not_searched_and_what_the_budget_left_out() -> None:
    result = RecallResult(
        query="q", results=[hit("m-1", "a", role="user")], skipped_channels={"graph": "down"}
    )
    assert render.render(result, omitted=2) == (
        "[memory:m-1] user 2024-05-01: a\n"
        "Not searched: graph (down).\n"
        "2 more hits left out to stay within max_tokens; raise it or narrow the call."
    )
    assert render.render(RecallResult(query="q", results=[])) == "No memories matched."


def test_a_neighbourhood_lists_notes_then_links() -> None:
    notes = [
        Note(id="n-1", project="p", content="Alice", type=NoteType.CONCEPT, created=DAY),
        Note(id="n-2", project="p", content="Alice likes tea.", type=NoteType.PREFERENCE, created=DAY),
    ]
    links = [Link(from_id="n-2", to_id="n-1", relation=Relation.PART_OF, strength=0.5, project="p")]
    assert render.render(Neighbourhood(notes=notes, links=links)) == (
        "[memory:n-1] concept note 2024-05-01: Alice\n"
        "[memory:n-2] preference note 2024-05-01: Alice likes tea.\n"
        "Links:\n"
        "n-2 -part_of-> n-1 (0.5)"
    )


def test_a_remembered_thread_reports_skipped_messages_and_parts_apart() -> None:
    result = RememberResult(
        thread_id="t-1",
        stored=2,
        unchanged=0,
        chunks=2,
        memory_ids=["a", "b"],
        skipped_messages=1,
        skipped_blocks=2,
        skipped_reasons={"role:tool": 1, "block:thinking": 1, "block:tool_use": 1},
    )
    assert render.render(result) == (
        "Thread t-1: 2 messages stored, 0 unchanged, 2 memories written; skipped 1 messages and 2 parts "
        "(role:tool 1, block:thinking 1, block:tool_use 1)."
    )


def test_a_long_text_is_cut_with_the_call_that_reads_on() -> None:
    text = " ".join(f"w{i}" for i in range(100))
    cut_text = cut(text, 20, Words(), "n-1")
    words = " ".join(f"w{i}" for i in range(15))
    assert cut_text == f'{words} […339 more chars: read_memory(memory_id="n-1", offset=50)]'
    assert Words().count_tokens(cut_text) <= 20
    assert cut(text, 100, Words(), "n-1") == text


def test_the_water_level_keeps_short_items_whole_and_shares_the_rest() -> None:
    assert water_level([10, 10, 100], 200) is None
    assert water_level([10, 10, 100, 100], 120) == 50
    assert water_level([10, 500], 110) == 100


def test_recall_within_its_budget_cuts_the_long_hit_and_keeps_the_short_ones() -> None:
    long_text = " ".join(f"w{i}" for i in range(5_000))
    result = RecallResult(
        query="q", results=[hit("a", "short one"), hit("b", long_text), hit("c", "short two")]
    )
    bounded, omitted = bound(result, 300, Words(), {})
    assert omitted == 0
    assert isinstance(bounded, RecallResult)
    assert [h.text for h in bounded.results][0::2] == ["short one", "short two"]
    assert 'read_memory(memory_id="b"' in bounded.results[1].text
    assert Words().count_tokens(render.render(bounded)) <= 300


class Letters:
    """A tokenizer where every character but a space is a token: a citation costs as much as a short text."""

    def count_tokens(self, text: str) -> int:
        return len(self.token_spans(text))

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [(i, i + 1) for i, c in enumerate(text) if not c.isspace()]


def test_short_hits_past_the_budget_are_left_out_whole_rather_than_cut_to_their_markers() -> None:
    result = RecallResult(
        query="q",
        results=[
            hit(f"{i:08d}-0000-4000-8000-000000000000", f"in region {i} the invoices run") for i in range(40)
        ],
    )
    line = Letters().count_tokens(render.hit_line(result.results[0])) + 1
    answer = present(result, {"max_tokens": 30 * line}, Letters())
    kept = answer.structured_content["results"]  # type: ignore[index]
    assert 25 <= len(kept) <= 30
    assert [h["text"] for h in kept] == [h.text for h in result.results[: len(kept)]]
    assert Letters().count_tokens(answer.content[0].text) <= 30 * line  # type: ignore[union-attr]


def test_items_past_the_budget_are_left_out_and_the_next_page_starts_after_the_kept_ones() -> None:
    threads = ThreadList(
        threads=[ThreadInfo(thread_id=f"t{i}", memories=i) for i in range(100)], next_offset=None
    )
    bounded, _ = bound(threads, 60, Words(), {"offset": 10})
    assert isinstance(bounded, ThreadList)
    assert len(bounded.threads) == 15  # "t0: 0 memories" and its newline: 4 tokens each
    assert bounded.next_offset == 25


class CountingWords(Words):
    """:class:`Words`, counting the texts it is asked to tokenize."""

    def __init__(self) -> None:
        self.texts = 0

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        self.texts += 1
        return super().token_spans(text)


def test_an_answer_within_its_budget_by_length_alone_is_never_tokenized() -> None:
    result = RecallResult(
        query="dog", results=[hit(f"m-{i}", f"Biscuit is a beagle, fact {i}.") for i in range(5)]
    )
    tokens = CountingWords()
    answer = present(result, {"max_tokens": 2_000}, tokens)
    assert tokens.texts == 0
    assert answer.structured_content == result.model_dump(mode="json", by_alias=True)
    assert render.render(result) in answer.content[0].text  # type: ignore[union-attr]


def test_an_answer_longer_than_its_budget_in_bytes_is_still_cut_by_its_tokens() -> None:
    result = RecallResult(query="dog", results=[hit(f"m-{i}", "beagle " * 40) for i in range(5)])
    tokens = CountingWords()
    answer = present(result, {"max_tokens": 120}, tokens)
    assert tokens.texts > 0
    assert Words().count_tokens(answer.content[0].text) <= 120  # type: ignore[union-attr]
    assert len(answer.structured_content["results"]) < 5  # type: ignore[index]


def test_a_weak_hit_is_marked_on_its_line() -> None:
    result = RecallResult(
        query="q", results=[hit("m-1", "a", role="user"), hit("m-2", "b", role="assistant", weak=True)]
    )
    assert render.render(result) == (
        "[memory:m-1] user 2024-05-01: a\n[memory:m-2] weak match: assistant 2024-05-01: b"
    )


def test_when_nothing_matches_well_the_text_says_so_first() -> None:
    result = RecallResult(query="q", results=[hit("m-2", "b", role="assistant", weak=True)])
    assert render.render(result) == (
        "Nothing stored matches this well; every hit below is a weak match, probably unrelated.\n"
        "[memory:m-2] weak match: assistant 2024-05-01: b"
    )
