"""Retention at read time: expired memories are never read back, before cleanup runs; a pin always wins."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hybrid_memory.errors import NotFoundError
from hybrid_memory.models import Direction, MessageIn, NoteType, Relation, Walk, utcnow
from hybrid_memory.service import NoteDraft, RecallOptions, ThreadDraft
from hybrid_memory.settings import LifecycleSettings

from .conftest import SCOPE, Harness, MakeService

WEEK_AGO = utcnow() - timedelta(days=7)


def said(text: str, message_id: str, *, days_ago: float = 0) -> MessageIn:
    return MessageIn(role="user", content=text, id=message_id, created_at=utcnow() - timedelta(days=days_ago))


async def recalled_texts(harness: Harness, query: str) -> list[str]:
    result = await harness.service.recall(SCOPE, query, RecallOptions(limit=10))
    return sorted(r.text for r in result.results)


async def context_texts(harness: Harness, thread_id: str | None = "t1") -> list[str]:
    context = await harness.service.memory_context(SCOPE, "zebra", thread_id=thread_id, max_tokens=2000)
    return sorted(i.text for i in [*context.core, *context.working, *context.recalled])


async def test_project_retention_hides_old_memories_before_cleanup(make_service: MakeService) -> None:
    harness = await make_service(LifecycleSettings(retention_days=3))
    await harness.service.remember_thread(
        SCOPE, ThreadDraft("t1", [said("zebra old", "old", days_ago=7), said("zebra new", "new")])
    )

    assert await recalled_texts(harness, "zebra") == ["zebra new"]
    assert await context_texts(harness) == ["zebra new"]
    assert await harness.count() == 2  # still on disk: cleanup has not run


async def test_per_item_retention_hides_an_expired_message(harness: Harness) -> None:
    await harness.service.remember_thread(
        SCOPE, ThreadDraft("t1", [said("zebra brief", "m1", days_ago=2)], retention_days=1)
    )
    await harness.service.remember_thread(SCOPE, ThreadDraft("t1", [said("zebra kept", "m2")]))

    assert await recalled_texts(harness, "zebra") == ["zebra kept"]
    assert await context_texts(harness) == ["zebra kept"]


async def test_a_pin_wins_over_the_project_retention_and_a_per_item_one(make_service: MakeService) -> None:
    harness = await make_service(LifecycleSettings(retention_days=3))
    [old] = (
        await harness.service.remember_thread(SCOPE, ThreadDraft("t1", [said("zebra old", "o", days_ago=7)]))
    ).memory_ids
    [short] = (
        await harness.service.remember_thread(
            SCOPE, ThreadDraft("t2", [said("zebra short", "s", days_ago=2)], retention_days=1)
        )
    ).memory_ids
    [gone] = (
        await harness.service.remember_thread(
            SCOPE, ThreadDraft("t3", [said("zebra gone", "g", days_ago=2)], retention_days=1)
        )
    ).memory_ids
    for memory_id in (old, short):
        await harness.service.pin(SCOPE, memory_id, True)

    assert await recalled_texts(harness, "zebra") == ["zebra old", "zebra short"]
    assert (await harness.service.cleanup(SCOPE)).deleted == 1
    assert sorted(m.id for m in await harness.vectors.get(SCOPE, [old, short, gone])) == sorted([old, short])


async def test_an_expired_note_leaves_recall_and_the_linked_notes(harness: Harness) -> None:
    kept = await harness.service.create_note(SCOPE, NoteDraft(content="zebra facts", type=NoteType.FACT))
    gone = await harness.service.create_note(
        SCOPE, NoteDraft(content="zebra rumours", type=NoteType.INSIGHT, retention_days=1)
    )
    await harness.service.create_link(SCOPE, from_id=kept.id, to_id=gone.id, relation=Relation.RELATES_TO)
    await harness.vectors.set_payload(SCOPE, gone.id, {"expires_at": WEEK_AGO})

    hood = await harness.service.linked_notes(
        SCOPE, Walk(note_id=kept.id, depth=1, relations=None, direction=Direction.BOTH, limit=10)
    )
    assert ([n.id for n in hood.notes], hood.links) == ([kept.id], [])
    assert await recalled_texts(harness, "zebra") == ["zebra facts"]
    with pytest.raises(NotFoundError) as refused:
        await harness.service.linked_notes(
            SCOPE, Walk(note_id=gone.id, depth=1, relations=None, direction=Direction.BOTH, limit=10)
        )
    assert str(refused.value).startswith(f"No note '{gone.id}' in this project.")
