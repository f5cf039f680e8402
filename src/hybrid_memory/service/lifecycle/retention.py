"""Retention at read time: the vector store as every read path sees it, expired memories absent.

Cleanup deletes expired memories later (or never, when nobody calls it); until then
they stay on disk but no recall, context, list or read returns them. The precedence
between pins and retention lives in :class:`~hybrid_memory.models.Liveness`: a pin
always wins, over the project's ``retention_days`` and over a per-item one.

Writes, repair and cleanup use the store itself: they must see what has expired.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import timedelta

from hybrid_memory.backends.base import RankedIds, SearchResults, VectorStore
from hybrid_memory.models import (
    Liveness,
    Memory,
    MemoryFilter,
    MemoryRecord,
    Neighbourhood,
    Scope,
    Searches,
    SparseVector,
    VectorHit,
    utcnow,
)


def liveness(retention_days: float | None) -> Liveness:
    """What counts as not expired now, under the project's ``retention_days``."""
    now = utcnow()
    return Liveness(
        now=now, retained_from=None if retention_days is None else now - timedelta(days=retention_days)
    )


class LiveVectors:
    """A :class:`VectorStore` whose reads leave out expired memories; writes pass through."""

    def __init__(self, store: VectorStore, retention_days: float | None) -> None:
        self._store = store
        self._retention_days = retention_days

    def _live(self, flt: MemoryFilter) -> MemoryFilter:
        # A filter that states its own liveness (cleanup's None is never passed here) keeps it.
        if flt.alive is not None:
            return flt
        return flt.model_copy(update={"alive": liveness(self._retention_days)})

    async def open(self, *, dimension: int, model: str) -> None:
        await self._store.open(dimension=dimension, model=model)

    async def close(self) -> None:
        await self._store.close()

    def in_use(self) -> AbstractContextManager[None]:
        return self._store.in_use()

    async def upsert(self, records: Sequence[MemoryRecord]) -> None:
        await self._store.upsert(records)

    async def set_payload(self, scope: Scope, memory_id: str, fields: dict[str, object]) -> bool:
        return await self._store.set_payload(scope, memory_id, fields)

    async def delete(self, scope: Scope, ids: Sequence[str]) -> int:
        return await self._store.delete(scope, ids)

    async def get(self, scope: Scope, ids: Sequence[str]) -> list[Memory]:
        alive = liveness(self._retention_days)
        return [m for m in await self._store.get(scope, ids) if not alive.expired(m)]

    async def search_dense(self, vector: Sequence[float], flt: MemoryFilter, limit: int) -> list[VectorHit]:
        return await self._store.search_dense(vector, self._live(flt), limit)

    async def search_sparse(
        self, vector: SparseVector, flt: MemoryFilter, limit: int, *, context: bool = False
    ) -> list[VectorHit]:
        return await self._store.search_sparse(vector, self._live(flt), limit, context=context)

    async def search_many(self, flt: MemoryFilter, limit: int, searches: Searches) -> SearchResults:
        return await self._store.search_many(self._live(flt), limit, searches)

    def cached(self, ids: Sequence[str]) -> dict[str, Memory]:
        alive = liveness(self._retention_days)
        return {i: m for i, m in self._store.cached(ids).items() if not alive.expired(m)}

    async def search_ids(self, flt: MemoryFilter, limit: int, searches: Searches) -> RankedIds:
        return await self._store.search_ids(self._live(flt), limit, searches)

    async def scroll(
        self, flt: MemoryFilter, limit: int, offset: str | None = None
    ) -> tuple[list[Memory], str | None]:
        return await self._store.scroll(self._live(flt), limit, offset)

    async def count(self, flt: MemoryFilter) -> int:
        return await self._store.count(self._live(flt))

    async def thread_counts(self, scope: Scope, limit: int) -> dict[str, int]:
        return await self._store.thread_counts(scope, limit)

    async def dense_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, list[float]]:
        return await self._store.dense_vectors(scope, ids)

    async def scopes(self) -> list[Scope]:
        return await self._store.scopes()

    async def live_neighbourhood(self, scope: Scope, hood: Neighbourhood) -> Neighbourhood:
        """``hood`` without the notes whose searchable copy has expired, nor their links."""
        if not hood.notes:
            return hood
        live = {m.id for m in await self.get(scope, [n.id for n in hood.notes])}
        # A note whose copy is missing altogether (a write cut short, repaired at start) stays.
        stored = {m.id for m in await self._store.get(scope, [n.id for n in hood.notes])}
        keep = {n.id for n in hood.notes if n.id in live or n.id not in stored}
        return Neighbourhood(
            notes=[n for n in hood.notes if n.id in keep],
            links=[lk for lk in hood.links if lk.from_id in keep and lk.to_id in keep],
        )
