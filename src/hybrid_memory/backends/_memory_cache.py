"""Decoded memories by point id, kept by the process that owns an embedded store.

Reading a hit's payload and turning it into a :class:`Memory` cost more than the
searches that found it (at 10k memories about 4 ms of a recall's 5 ms in the store),
and an agent's recalls keep finding the same memories. Only the owning process writes
an embedded store, so its writes are all the invalidation the cache needs.

Reads look up and fill the cache from the store's worker threads; a write forgets its
ids and bumps a generation first, and a read fills in what it read only if no write
came in between, so a payload read before a write is never kept after it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable, Sequence

from hybrid_memory.models import Memory

CACHE_SIZE = 8192
"""Memories kept, least recently used out first: about 12 MB of chat turns."""


class MemoryCache:
    """A bounded LRU of memories by canonical point id, safe across threads."""

    def __init__(self, size: int = CACHE_SIZE) -> None:
        self._size = size
        self._items: OrderedDict[str, Memory] = OrderedDict()
        self._lock = threading.Lock()
        self._generation = 0

    def lookup(self, ids: Sequence[str]) -> tuple[dict[str, Memory], int]:
        """The cached memories among ``ids`` and the generation to hand back to :meth:`fill`."""
        with self._lock:
            found = {}
            for pid in ids:
                memory = self._items.get(pid)
                if memory is not None:
                    self._items.move_to_end(pid)
                    found[pid] = memory
            return found, self._generation

    def fill(self, memories: Iterable[Memory], generation: int) -> None:
        """Keep memories read at ``generation``, unless a write has come since."""
        with self._lock:
            if generation != self._generation:
                return
            for memory in memories:
                self._items[memory.id] = memory
                self._items.move_to_end(memory.id)
            while len(self._items) > self._size:
                self._items.popitem(last=False)

    def forget(self, ids: Iterable[str]) -> None:
        """A write to ``ids`` (canonical point ids) is about to happen."""
        with self._lock:
            self._generation += 1
            for pid in ids:
                self._items.pop(pid, None)

    def clear(self) -> None:
        with self._lock:
            self._generation += 1
            self._items.clear()
