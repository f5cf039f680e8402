"""Recall's filters and channels, over in-memory stores."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hybrid_memory.models import MemoryKind, MessageIn, NoteType, Relation
from hybrid_memory.service import NoteDraft, RecallOptions, TaskDraft, ThreadDraft

from .conftest import SCOPE, Harness

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


async def recall_texts(harness: Harness, query: str, **options: object) -> list[str]:
    result = await harness.service.recall(SCOPE, query, RecallOptions(limit=20, **options))  # type: ignore[arg-type]
    return sorted(hit.text for hit in result.results)


async def remember_dated(harness: Harness, thread_id: str, *texts_and_days: tuple[str, int]) -> None:
    turns = [
        MessageIn(role="user", content=text, id=f"{thread_id}-{i}", created_at=T0 + timedelta(days=day))
        for i, (text, day) in enumerate(texts_and_days)
    ]
    await harness.service.remember_thread(SCOPE, ThreadDraft(thread_id, turns))


async def test_recall_filters_by_thread_kind_and_tag(harness: Harness) -> None:
    await remember_dated(harness, "t1", ("kiwi in thread one", 0))
    await remember_dated(harness, "t2", ("kiwi in thread two", 0))
    await harness.service.create_note(
        SCOPE, NoteDraft(content="kiwi note", type=NoteType.FACT, tags=["fruit"])
    )
    await harness.service.record_task(
        SCOPE, TaskDraft(description="buy kiwi", outcome="bought", success=True)
    )

    assert await recall_texts(harness, "kiwi", thread_id="t1") == ["kiwi in thread one"]
    assert await recall_texts(harness, "kiwi", kinds=[MemoryKind.NOTE]) == ["kiwi note"]
    assert await recall_texts(harness, "kiwi", tags=["fruit"]) == ["kiwi note"]
    assert await recall_texts(harness, "kiwi", kinds=[MemoryKind.TASK]) == [
        "Task: buy kiwi\nOutcome (succeeded): bought"
    ]


async def test_recall_since_is_inclusive_and_until_exclusive(harness: Harness) -> None:
    await remember_dated(harness, "t1", ("kiwi day zero", 0), ("kiwi day one", 1), ("kiwi day two", 2))

    assert await recall_texts(harness, "kiwi", since=T0 + timedelta(days=1)) == [
        "kiwi day one",
        "kiwi day two",
    ]
    assert await recall_texts(harness, "kiwi", until=T0 + timedelta(days=1)) == ["kiwi day zero"]


async def test_recall_as_of_answers_as_memory_stood_then(harness: Harness) -> None:
    await remember_dated(harness, "t1", ("kiwi day zero", 0), ("kiwi day two", 2))

    assert await recall_texts(harness, "kiwi", as_of=T0 + timedelta(days=1)) == ["kiwi day zero"]


async def test_a_superseded_note_is_recalled_only_when_asked_for(harness: Harness) -> None:
    old = await harness.service.create_note(
        SCOPE, NoteDraft(content="kiwi costs one euro", type=NoteType.FACT)
    )
    new = await harness.service.create_note(
        SCOPE, NoteDraft(content="kiwi costs two euros", type=NoteType.FACT)
    )
    await harness.service.create_link(SCOPE, from_id=new.id, to_id=old.id, relation=Relation.SUPERSEDES)

    assert await recall_texts(harness, "kiwi costs") == ["kiwi costs two euros"]
    assert await recall_texts(harness, "kiwi costs", include_invalid=True) == [
        "kiwi costs one euro",
        "kiwi costs two euros",
    ]


async def test_a_note_linked_to_a_hit_joins_through_the_neighbour_channel(harness: Harness) -> None:
    # Three notes with the word: the seeds of the walk. The linked one, without it, is found by its link.
    hits = [
        await harness.service.create_note(
            SCOPE, NoteDraft(content=f"The zeppelin {topic}.", type=NoteType.FACT)
        )
        for topic in ("project starts in June", "hangar is in Friedrichshafen", "crew has six people")
    ]
    linked = await harness.service.create_note(
        SCOPE, NoteDraft(content="Budget approved by finance.", type=NoteType.DECISION)
    )
    await harness.service.create_link(SCOPE, from_id=linked.id, to_id=hits[0].id, relation=Relation.SUPPORTS)

    result = await harness.service.recall(SCOPE, "zeppelin", RecallOptions(limit=5))

    channels = {h.id: h.channels for h in result.results}
    assert {h.id for h in result.results[:3]} == {h.id for h in hits}
    assert "neighbour" in channels[linked.id]


async def test_a_note_gone_from_the_graph_is_never_recalled(harness: Harness) -> None:
    note = await harness.service.create_note(SCOPE, NoteDraft(content="orphaned walrus", type=NoteType.FACT))
    await harness.graph.delete_note(SCOPE, note.id)  # a delete cut short: the vector copy remains

    assert await recall_texts(harness, "walrus") == []


async def test_neighbouring_turns_inherit_relevance_within_the_thread(harness: Harness) -> None:
    await harness.service.remember_thread(
        SCOPE,
        ThreadDraft(
            "t1",
            [
                MessageIn(role="user", content="What is the zeppelin budget?", id="q"),
                MessageIn(role="assistant", content="Two million.", id="a"),
            ],
        ),
    )

    result = await harness.service.recall(SCOPE, "zeppelin budget", RecallOptions(limit=5))

    # the answer, found through its question's words, takes the question's place
    assert [h.text for h in result.results][:2] == ["Two million.", "What is the zeppelin budget?"]
