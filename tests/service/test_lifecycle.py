"""Pins, the memory context, limits with eviction and summaries, retention, tasks and dry runs."""

from __future__ import annotations

from datetime import timedelta

import pytest

from hybrid_memory.errors import InvalidInputError, NotFoundError
from hybrid_memory.models import MemoryFilter, MemoryKind, MessageIn, NoteType, Relation, utcnow
from hybrid_memory.service import NoteDraft, RecallOptions, TaskDraft, ThreadDraft
from hybrid_memory.settings import LifecycleSettings

from .conftest import SCOPE, Harness, MakeService, messages


async def scroll_texts(harness: Harness, **conditions: object) -> list[str]:
    page, _ = await harness.vectors.scroll(MemoryFilter(scope=SCOPE, **conditions), 100)
    return sorted(m.text for m in page)


def numbered(count: int, start: int = 0) -> list[MessageIn]:
    """Messages a minute apart, oldest first, so fifo order is their order."""
    then = utcnow() - timedelta(hours=1)
    return [
        MessageIn(role="user", content=f"message {i}", id=f"m{i}", created_at=then + timedelta(minutes=i))
        for i in range(start, start + count)
    ]


# --- pins and the memory context -------------------------------------------------------------------


async def test_pin_and_unpin_report_whether_anything_changed(harness: Harness) -> None:
    [memory_id] = (
        await harness.service.remember_thread(SCOPE, ThreadDraft("t1", messages("core fact")))
    ).memory_ids

    pinned = await harness.service.pin(SCOPE, memory_id, True)
    again = await harness.service.pin(SCOPE, memory_id, True)

    assert (pinned.pinned, pinned.changed, again.changed) == (True, True, False)
    assert await harness.count(pinned=True) == 1
    assert (await harness.service.pin(SCOPE, memory_id, False)).changed is True
    assert await harness.count(pinned=True) == 0


async def test_pin_of_an_unknown_id_says_how_to_find_one(harness: Harness) -> None:
    with pytest.raises(NotFoundError) as refused:
        await harness.service.pin(SCOPE, "nope", True)

    assert str(refused.value) == (
        "No memory or note 'nope' in this project. recall_memory and create_note return the ids you can pin."
    )


async def test_memory_context_puts_core_then_working_then_recalled(harness: Harness) -> None:
    core = await harness.service.create_note(
        SCOPE, NoteDraft(content="The user is called Ann.", type=NoteType.FACT)
    )
    await harness.service.pin(SCOPE, core.id, True)
    await harness.service.remember_thread(SCOPE, ThreadDraft("other", messages("kiwi talk elsewhere")))
    working = await harness.service.remember_thread(
        SCOPE, ThreadDraft("t1", messages("first turn", "second turn"))
    )

    context = await harness.service.memory_context(SCOPE, "kiwi", thread_id="t1", max_tokens=500)

    assert [i.id for i in context.core] == [core.id]
    assert [i.id for i in context.working] == list(reversed(working.memory_ids))
    assert [i.text for i in context.recalled] == ["kiwi talk elsewhere"]
    assert context.text.startswith(f"Core memory:\n- [memory:{core.id}] The user is called Ann.")
    assert context.tokens == harness.embedder.count_tokens(context.text) <= 500
    assert context.omitted == 0


async def test_memory_context_lists_the_current_notes_most_important_first_and_never_a_superseded_one(
    harness: Harness,
) -> None:
    async def note(content: str, type: NoteType, importance: float) -> str:
        draft = NoteDraft(content=content, type=type, importance=importance)
        return (await harness.service.create_note(SCOPE, draft)).id

    old = await note("Billing runs on Postgres 16.", NoteType.DECISION, 0.9)
    rule = await note("Never push to main directly.", NoteType.PREFERENCE, 0.8)
    fact = await note("Tests run with make test.", NoteType.FACT, 0.5)
    await note("Why is the cache cold on Mondays?", NoteType.QUESTION, 1.0)
    new = await note("Billing moved from Postgres 16 to CockroachDB.", NoteType.DECISION, 0.9)
    await harness.service.create_link(SCOPE, from_id=new, to_id=old, relation=Relation.SUPERSEDES)

    context = await harness.service.memory_context(SCOPE, "anything", thread_id=None, max_tokens=1000)

    assert [(i.id, i.role) for i in context.notes] == [
        (new, "decision"),
        (rule, "preference"),
        (fact, "fact"),
    ]
    assert old not in {i.id for i in context.recalled}
    assert "Current notes (decisions, preferences, facts):\n- [memory:" in context.text


async def test_memory_context_stays_within_its_budget(harness: Harness) -> None:
    await harness.service.remember_thread(
        SCOPE, ThreadDraft("t1", messages(*(f"turn number {i} of many" for i in range(20))))
    )

    context = await harness.service.memory_context(SCOPE, "turn", thread_id="t1", max_tokens=60)

    assert 0 < context.tokens <= 60
    assert context.omitted > 0
    assert len(context.working) + len(context.recalled) + context.omitted == 20


async def test_memory_context_needs_a_positive_budget(harness: Harness) -> None:
    with pytest.raises(InvalidInputError) as refused:
        await harness.service.memory_context(SCOPE, "x", thread_id=None, max_tokens=0)

    assert str(refused.value) == "max_tokens must be at least 1, got 0."


# --- limits and eviction -------------------------------------------------------------------------------


async def test_fifo_limit_evicts_the_oldest_without_a_summary(make_service: MakeService) -> None:
    harness = await make_service(
        LifecycleSettings(max_items=3, eviction_policy="fifo", summarize_on_evict=False)
    )

    result = await harness.service.remember_thread(SCOPE, ThreadDraft("t1", numbered(5)))

    assert result.evicted == 2
    assert await scroll_texts(harness) == ["message 2", "message 3", "message 4"]


async def test_evicted_memories_are_replaced_by_one_extractive_summary(make_service: MakeService) -> None:
    harness = await make_service(LifecycleSettings(max_items=4, eviction_policy="fifo"))

    await harness.service.remember_thread(SCOPE, ThreadDraft("t1", numbered(5)))

    [summary] = (await harness.vectors.scroll(MemoryFilter(scope=SCOPE, kinds=[MemoryKind.SUMMARY]), 10))[0]
    assert await scroll_texts(harness, kinds=[MemoryKind.MESSAGE]) == ["message 2", "message 3", "message 4"]
    assert summary.text.startswith("Summary of 2 earlier memories (")
    assert summary.text.endswith("- user: message 0 - user: message 1")
    assert (summary.tags, summary.source, summary.replaced_count, summary.thread_id) == (
        ["summary"],
        "eviction:extractive",
        2,
        "t1",
    )


async def test_a_later_eviction_merges_the_earlier_summary(make_service: MakeService) -> None:
    harness = await make_service(LifecycleSettings(max_items=4, eviction_policy="fifo"))
    await harness.service.remember_thread(SCOPE, ThreadDraft("t1", numbered(5)))

    await harness.service.remember_thread(SCOPE, ThreadDraft("t2", numbered(2, start=5)))

    summaries = (await harness.vectors.scroll(MemoryFilter(scope=SCOPE, kinds=[MemoryKind.SUMMARY]), 10))[0]
    assert len(summaries) == 1
    # messages 2-4 go (6 items, and room for the summary), and the first summary with them
    assert summaries[0].replaced_count == 5
    assert await scroll_texts(harness, kinds=[MemoryKind.MESSAGE]) == ["message 5", "message 6"]


async def test_pinned_memories_are_never_evicted(make_service: MakeService) -> None:
    harness = await make_service(
        LifecycleSettings(max_items=2, eviction_policy="fifo", summarize_on_evict=False)
    )
    first = await harness.service.remember_thread(SCOPE, ThreadDraft("t1", numbered(1)))
    await harness.service.pin(SCOPE, first.memory_ids[0], True)

    await harness.service.remember_thread(SCOPE, ThreadDraft("t2", numbered(3, start=1)))

    assert await scroll_texts(harness) == ["message 0", "message 3"]


async def test_lru_keeps_what_was_recalled(make_service: MakeService) -> None:
    harness = await make_service(
        LifecycleSettings(max_items=2, eviction_policy="lru", summarize_on_evict=False)
    )
    await harness.service.remember_thread(SCOPE, ThreadDraft("t1", numbered(2)))
    await harness.service.recall(SCOPE, "message 0", RecallOptions(limit=1))

    await harness.service.remember_thread(SCOPE, ThreadDraft("t2", numbered(1, start=2)))

    assert await scroll_texts(harness) == ["message 0", "message 2"]


async def test_token_limit_counts_the_model_tokens(make_service: MakeService) -> None:
    harness = await make_service(
        LifecycleSettings(max_tokens=5, eviction_policy="fifo", summarize_on_evict=False)
    )

    await harness.service.remember_thread(SCOPE, ThreadDraft("t1", numbered(3)))  # 2 fake tokens each

    assert await scroll_texts(harness) == ["message 1", "message 2"]


async def test_ttl_evicts_what_is_older_than_the_ttl(make_service: MakeService) -> None:
    harness = await make_service(
        LifecycleSettings(ttl_days=1, eviction_policy="ttl", summarize_on_evict=False)
    )
    old = MessageIn(role="user", content="from last week", id="old", created_at=utcnow() - timedelta(days=7))

    result = await harness.service.remember_thread(
        SCOPE, ThreadDraft("t1", [old, MessageIn(role="user", content="today")])
    )

    assert result.evicted == 1
    assert await scroll_texts(harness) == ["today"]


async def test_cleanup_deletes_what_the_retention_expired(make_service: MakeService) -> None:
    harness = await make_service(LifecycleSettings(retention_days=3))
    old = MessageIn(role="user", content="long ago", id="old", created_at=utcnow() - timedelta(days=7))
    await harness.service.remember_thread(
        SCOPE, ThreadDraft("t1", [old, MessageIn(role="user", content="recent")])
    )

    result = await harness.service.cleanup(SCOPE)

    assert (result.deleted, result.evicted, result.summary_id) == (1, 0, None)
    assert await scroll_texts(harness) == ["recent"]


async def test_the_dry_run_asks_for_a_summary_and_writes_nothing(make_service: MakeService) -> None:
    harness = await make_service(LifecycleSettings(max_items=2, eviction_policy="fifo"))
    await harness.service.remember_thread(SCOPE, ThreadDraft("t1", numbered(2)))

    request = (await harness.service.plan_thread(SCOPE, ThreadDraft("t1", numbered(2, start=2)))).summary

    assert request is not None
    assert request.lines == ("user: message 0", "user: message 1", "user: message 2")
    assert request.budget == 160
    assert await harness.count() == 2


async def test_stats_count_by_kind(harness: Harness) -> None:
    await harness.service.remember_thread(SCOPE, ThreadDraft("t1", messages("one two", "three")))
    await harness.service.create_note(SCOPE, NoteDraft(content="a note", type=NoteType.FACT))

    stats = await harness.service.stats(SCOPE)

    counts = {k.kind: (k.count, k.tokens) for k in stats.by_kind}
    assert (stats.items, stats.tokens, stats.notes) == (3, 5, 1)
    assert counts[MemoryKind.MESSAGE] == (2, 3)
    assert counts[MemoryKind.NOTE] == (1, 2)


# --- tasks ----------------------------------------------------------------------------------------------


async def test_record_task_stores_a_tagged_task_memory(harness: Harness) -> None:
    result = await harness.service.record_task(
        SCOPE, TaskDraft(description="migrate the db", outcome="timed out", success=False, tags=["db"])
    )

    [memory] = await harness.vectors.get(SCOPE, [result.id])
    assert result.text == "Task: migrate the db\nOutcome (failed): timed out"
    assert (memory.kind, memory.tags, memory.importance) == (MemoryKind.TASK, ["db", "failure", "task"], 0.7)


async def test_record_task_is_evicted_like_any_memory(make_service: MakeService) -> None:
    harness = await make_service(
        LifecycleSettings(max_items=1, eviction_policy="fifo", summarize_on_evict=False)
    )
    await harness.service.remember_thread(SCOPE, ThreadDraft("t1", numbered(1)))

    result = await harness.service.record_task(
        SCOPE, TaskDraft(description="deploy", outcome="done", success=True)
    )

    assert result.evicted == 1
    assert await scroll_texts(harness) == [result.text]
