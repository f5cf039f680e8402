"""Recall reads the memories of the candidates that can rank, and answers as if it had read them all."""

from __future__ import annotations

import random
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from hybrid_memory.models import Memory, MemoryFilter, MessageIn, NoteType, utcnow
from hybrid_memory.service import NoteDraft, RecallOptions, ThreadDraft
from hybrid_memory.service.recall import depth

from .conftest import SCOPE, Harness

T0 = datetime(2023, 5, 1, 12, 0, tzinfo=UTC)
WORDS = [
    "ferry",
    "lisbon",
    "trams",
    "dentist",
    "billing",
    "postgres",
    "database",
    "budget",
    "garden",
    "tomatoes",
    "marathon",
    "shoes",
    "recipe",
    "curry",
    "guitar",
    "lessons",
    "camping",
    "lake",
    "visa",
    "passport",
]
ASK = ("Which {} should we pick?", "Did you see the {} and the {}?", "What about {}?")
SAY = ("We went with {} for {}.", "I think the {} near the {} is best.", "Noted: {} and {} again.")
QUERIES = (
    "which database did we pick for billing",
    "what did Caroline say about the garden",
    "when did I go camping at the lake",
    "ferry to lisbon in May 2023",
    "my dentist appointment",
    "what did you recommend for the curry recipe",
    "guitar lessons budget",
    "passport visa",
)


def turn(rng: random.Random, i: int, thread: int, authors: bool) -> MessageIn:
    template = rng.choice(ASK if rng.random() < 0.3 else SAY)
    text = template.format(*rng.sample(WORDS, template.count("{}")))
    if rng.random() < 0.15:  # a long turn: several chunks
        text = " ".join([text] * 40)
    if authors:
        text = f"{('Caroline', 'Melanie')[i % 2]}: {text}"
    return MessageIn(
        role=("user", "assistant")[i % 2],
        content=text,
        id=f"m{i}",
        created_at=T0 + timedelta(days=7 * thread, minutes=i),
    )


async def fill(harness: Harness, *, authors: bool = False, notes: bool = False) -> None:
    rng = random.Random(7)
    for thread in range(12):
        turns = [turn(rng, i, thread, authors) for i in range(14)]
        await harness.service.remember_thread(SCOPE, ThreadDraft(f"t{thread}", turns))
    for word in WORDS[:6] if notes else ():
        note = NoteDraft(content=f"We settled on the {word}.", type=NoteType.DECISION)
        await harness.service.create_note(SCOPE, note)


class Reads:
    """Counts the memories recall reads by id (``scroll`` with ``ids``)."""

    def __init__(self, harness: Harness) -> None:
        self.ids = 0
        scroll = harness.vectors.scroll

        async def counting(
            flt: MemoryFilter, limit: int, offset: str | None = None
        ) -> tuple[list[Memory], str | None]:
            self.ids += len(flt.ids or ())
            return await scroll(flt, limit, offset)

        harness.vectors.scroll = counting  # type: ignore[method-assign]


async def both_ways(
    harness: Harness, monkeypatch: pytest.MonkeyPatch, queries: Sequence[str], limits: Sequence[int]
) -> tuple[int, int]:
    """Each query and limit recalled reading every candidate and reading by depth; the ids read by each."""
    reads = Reads(harness)
    every = by_depth = 0
    # Both ways at one time: a note written during the test is seconds old, and its recency, hence its
    # score, would otherwise differ between the two recalls in the sixth decimal now and then.
    now = utcnow()
    for query in queries:
        for limit in limits:
            options = RecallOptions(limit=limit, as_of=now)
            with monkeypatch.context() as patch:
                patch.setattr(depth, "reads_all", lambda s, config: True)
                before = reads.ids
                all_read = await harness.service.recall(SCOPE, query, options, record=False)
                every += reads.ids - before
            before = reads.ids
            found = await harness.service.recall(SCOPE, query, options, record=False)
            by_depth += reads.ids - before
            assert found.model_dump() == all_read.model_dump(), (query, limit)
    return every, by_depth


async def test_recall_reads_fewer_memories_and_answers_as_if_it_read_every_candidate(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    await fill(harness)

    every, by_depth = await both_ways(harness, monkeypatch, QUERIES, (1, 3, 5, 10))

    assert by_depth < every * 0.9


async def test_recall_with_notes_that_lend_their_links_answers_as_if_it_read_every_candidate(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    await fill(harness, notes=True)

    every, by_depth = await both_ways(harness, monkeypatch, QUERIES, (1, 3, 5, 10))

    assert by_depth < every


async def test_recall_reads_every_candidate_when_a_query_may_name_a_turns_author(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    await fill(harness, authors=True, notes=True)

    every, by_depth = await both_ways(harness, monkeypatch, QUERIES, (1, 5))

    assert by_depth <= every
