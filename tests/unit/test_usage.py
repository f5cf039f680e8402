"""The running counts that let a write within the limits skip the full eviction plan."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from hybrid_memory.models import Memory, MemoryKind, Scope
from hybrid_memory.service.indexer import CONTEXT_CHARS, context_tail, needs_context
from hybrid_memory.service.lifecycle import eviction
from hybrid_memory.service.usage import RESCAN_WRITES, Tally, Usage

SCOPE = Scope(project="p", user="u")
T0 = datetime(2024, 1, 1, tzinfo=UTC)


def memory(tokens: int = 10, *, days: int = 0, pinned: bool = False, **fields: object) -> Memory:
    fields = {"kind": MemoryKind.MESSAGE, **fields}
    return Memory(
        id=str(uuid.uuid4()),
        text="x",
        project=SCOPE.project,
        user=SCOPE.user,
        created_at=T0 + timedelta(days=days),
        tokens=tokens,
        pinned=pinned,
        **fields,
    )


def test_an_unscanned_scope_has_no_counts() -> None:
    usage = Usage()
    usage.added([memory()])
    assert usage.current(SCOPE) is None


def test_writes_add_to_what_the_scan_found() -> None:
    usage = Usage()
    usage.scanning(SCOPE)
    usage.scanned(SCOPE, [memory(5), memory(7)])
    usage.added([memory(3)])
    assert usage.current(SCOPE) == Tally(items=3, tokens=15, oldest=T0)


def test_a_write_during_a_scan_is_counted_even_if_the_scan_saw_it() -> None:
    usage = Usage()
    usage.scanning(SCOPE)
    written = memory(4)
    usage.added([written])
    usage.scanned(SCOPE, [written])
    assert usage.current(SCOPE) == Tally(items=2, tokens=8, oldest=T0)


def test_counts_are_dropped_when_forgotten_and_after_many_writes() -> None:
    usage = Usage()
    usage.scanning(SCOPE)
    usage.scanned(SCOPE, [])
    usage.forget(SCOPE)
    assert usage.current(SCOPE) is None
    usage.scanning(SCOPE)
    usage.scanned(SCOPE, [])
    usage.added([memory() for _ in range(RESCAN_WRITES)])
    assert usage.current(SCOPE) is None


def test_pinned_memories_do_not_set_the_oldest() -> None:
    tally = Tally.of([memory(days=1, pinned=True), memory(days=5)])
    assert tally.oldest == T0 + timedelta(days=5)


def test_within_follows_the_limits_and_the_ttl_cutoff() -> None:
    tally = Tally(items=3, tokens=30, oldest=T0)
    assert tally.within(eviction.Limits(max_items=3, max_tokens=30))
    assert not tally.within(eviction.Limits(max_items=2))
    assert not tally.within(eviction.Limits(max_tokens=29))
    assert not tally.within(eviction.Limits(policy="ttl", ttl_cutoff=T0 + timedelta(seconds=1)))
    assert tally.within(eviction.Limits(policy="ttl", ttl_cutoff=T0))
    assert tally.within(eviction.Limits(policy="lru", ttl_cutoff=T0 + timedelta(days=1)))


def test_the_context_tail_is_the_last_words_of_the_previous_memory() -> None:
    assert context_tail("short question?") == "short question?"
    long = "word " * 200
    tail = context_tail(long)
    assert len(tail) < CONTEXT_CHARS
    assert tail.startswith("word")
    assert long.endswith(tail)


def test_only_a_message_first_chunk_after_another_gets_a_context() -> None:
    assert needs_context(memory(prev_id="a"))
    assert not needs_context(memory())
    assert not needs_context(memory(prev_id="a", chunk_index=1))
    assert not needs_context(memory(prev_id="a", kind=MemoryKind.NOTE))
