"""The decoded-memory cache of the embedded store: bounded, and never keeping a read a write overtook."""

from __future__ import annotations

from datetime import UTC, datetime

from hybrid_memory.backends._memory_cache import MemoryCache
from hybrid_memory.models import Memory, MemoryKind


def memory(pid: str, text: str = "t") -> Memory:
    created = datetime(2024, 1, 1, tzinfo=UTC)
    return Memory(id=pid, kind=MemoryKind.MESSAGE, text=text, project="p", created_at=created)


def test_a_read_filled_in_is_found_by_the_next_lookup() -> None:
    cache = MemoryCache()
    found, generation = cache.lookup(["a", "b"])
    assert found == {}
    cache.fill([memory("a"), memory("b")], generation)
    assert cache.lookup(["a", "c"])[0] == {"a": memory("a")}


def test_a_read_overtaken_by_a_write_is_not_kept() -> None:
    cache = MemoryCache()
    _, generation = cache.lookup(["a"])
    cache.forget(["z"])  # any write between the read and its fill
    cache.fill([memory("a", "old")], generation)
    assert cache.lookup(["a"])[0] == {}


def test_a_write_forgets_its_ids_only() -> None:
    cache = MemoryCache()
    cache.fill([memory("a"), memory("b")], cache.lookup([])[1])
    cache.forget(["a"])
    assert cache.lookup(["a", "b"])[0] == {"b": memory("b")}


def test_the_least_recently_used_leave_first() -> None:
    cache = MemoryCache(size=2)
    cache.fill([memory("a"), memory("b")], cache.lookup([])[1])
    cache.lookup(["a"])  # a is used again: b is now the oldest
    cache.fill([memory("c")], cache.lookup([])[1])
    assert set(cache.lookup(["a", "b", "c"])[0]) == {"a", "c"}
