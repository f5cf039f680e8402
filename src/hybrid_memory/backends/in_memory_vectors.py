"""A ``VectorStore`` held in a Python dict: the stand-in for Qdrant in tests of logic.

It keeps what the Qdrant stores keep and answers as they do, so it passes the same
contract suite:

- points are stored as Qdrant payloads (:func:`common.memory_to_payload`) and read
  back through :func:`common.payload_to_memory`, so datetimes come back in UTC and
  no caller can alias a stored value;
- every filter is the list of conditions :func:`common.filter_conditions` makes,
  evaluated here the way Qdrant evaluates them (a list field matches when any of its
  values does; a missing or null field matches no condition);
- dense vectors are normalised on the way in and searched by dot product (Qdrant's
  cosine distance); sparse search is the dot product of the query, weighted by each
  term's IDF over the whole store, with the stored term weights: Qdrant's ``idf``
  modifier, ``ln(1 + (N - n + 0.5) / (n + 0.5))``;
- scroll pages in id order and hands back the first id of the next page as offset.

Nothing is persisted. :class:`VectorData` is the "disk": a store opened again over
the same ``VectorData`` sees the same memories and the model that filled them.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import anyio.lowlevel

from hybrid_memory.backends import _qdrant_common as common
from hybrid_memory.backends.base import RankedIds, SearchResults
from hybrid_memory.models import Memory, MemoryFilter, MemoryRecord, Scope, Searches, SparseVector, VectorHit


@dataclass
class _Point:
    payload: dict[str, Any]
    dense: list[float]
    sparse: dict[int, float]
    context: dict[int, float]


@dataclass
class VectorData:
    """What an in-memory store holds; shared by the stores opened over it."""

    identity: common.StoreIdentity | None = None
    points: dict[str, _Point] = field(default_factory=dict)


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(v * v for v in vector))
    return [v / norm for v in vector] if norm > 0 else list(vector)


def _terms(vector: SparseVector) -> dict[int, float]:
    return dict(zip(vector.indices, vector.values, strict=True))


def _datetime(value: object) -> datetime | None:
    return datetime.fromisoformat(value) if isinstance(value, str) else None


def _alive(payload: Mapping[str, Any], condition: common.Alive) -> bool:
    if payload.get("pinned_kw") == "true":
        return True
    expires = _datetime(payload.get("expires_at"))
    if expires is not None and expires <= datetime.fromisoformat(condition.now):
        return False
    since = _datetime(condition.retained_from)
    created = _datetime(payload.get("created_at"))
    return since is None or (created is not None and created >= since)


def _matches(pid: str, payload: Mapping[str, Any], condition: common.Condition) -> bool:
    if isinstance(condition, common.HasId):
        return pid in condition.ids
    if isinstance(condition, common.Alive):
        return _alive(payload, condition)
    value = payload.get(condition.key)
    if isinstance(condition, common.DatetimeRange):
        at = _datetime(value)
        if at is None:
            return False
        low, high = _datetime(condition.gte), _datetime(condition.lt)
        return (low is None or at >= low) and (high is None or at < high)
    wanted = (condition.value,) if isinstance(condition, common.MatchValue) else condition.values
    values = value if isinstance(value, list) else [value]
    return any(v in wanted for v in values if v is not None)


class InMemoryVectorStore:
    """The ``VectorStore`` protocol over a :class:`VectorData` (a fresh one when none is given)."""

    def __init__(self, data: VectorData | None = None) -> None:
        self._data = data if data is not None else VectorData()
        self._dimension: int | None = None

    # --- lifecycle ----------------------------------------------------------------------------

    async def open(self, *, dimension: int, model: str) -> None:
        """Open for vectors of ``dimension`` by ``model``; ``ConflictError`` when another model filled it."""
        if self._dimension is not None:
            raise RuntimeError("InMemoryVectorStore is already open")
        wanted = common.StoreIdentity(model, dimension)
        if self._data.identity is not None:
            common.check_identity(
                self._data.identity, wanted, store="in memory", elsewhere="start a new in-memory store"
            )
        self._data.identity = wanted
        self._dimension = dimension

    def in_use(self) -> AbstractContextManager[None]:
        """Nothing to hold back: this store does no background work of its own."""
        return nullcontext()

    async def close(self) -> None:
        self._dimension = None

    async def _ready(self) -> int:
        # A checkpoint, as every real store call has one: concurrent callers interleave here.
        await anyio.lowlevel.checkpoint()
        if self._dimension is None:
            raise RuntimeError("InMemoryVectorStore is not open; call open() first")
        return self._dimension

    def _select(self, flt: MemoryFilter) -> Iterable[tuple[str, _Point]]:
        """The points passing ``flt``, in id order."""
        conditions = common.filter_conditions(flt)
        for pid in sorted(self._data.points):
            point = self._data.points[pid]
            if all(_matches(pid, point.payload, c) for c in conditions):
                yield pid, point

    # --- writes -------------------------------------------------------------------------------

    async def upsert(self, records: Sequence[MemoryRecord]) -> None:
        """Insert or replace by ``memory.id``; a batch with one bad record stores nothing."""
        dimension = await self._ready()
        points: dict[str, _Point] = {}
        for record in records:
            pid, dense = common.check_record(record, dimension)
            context = record.sparse_context or record.sparse
            common.check_sparse(context)
            payload = common.memory_to_payload(record.memory)
            points[pid] = _Point(payload, _unit(dense), _terms(record.sparse), _terms(context))
        self._data.points.update(points)

    async def set_payload(self, scope: Scope, memory_id: str, fields: dict[str, object]) -> bool:
        """Update some Memory fields of one memory; False when it does not exist in ``scope``."""
        await self._ready()
        pid = common.point_id(memory_id)
        if pid is None:
            return False
        found = list(self._select(MemoryFilter(scope=scope, ids=[pid])))
        if not found:
            return False
        point = found[0][1]
        point.payload.update(common.payload_update(common.payload_to_memory(pid, point.payload), fields))
        return True

    async def delete(self, scope: Scope, ids: Sequence[str]) -> int:
        """Delete these ids where they belong to ``scope``; returns how many existed."""
        await self._ready()
        if not common.point_ids(ids):
            return 0
        found = [pid for pid, _ in self._select(MemoryFilter(scope=scope, ids=list(ids)))]
        for pid in found:
            del self._data.points[pid]
        return len(found)

    # --- reads --------------------------------------------------------------------------------

    async def get(self, scope: Scope, ids: Sequence[str]) -> list[Memory]:
        """The memories among ``ids`` that exist in ``scope``."""
        await self._ready()
        wanted = common.point_ids(ids)
        if not wanted:
            return []
        found = self._select(MemoryFilter(scope=scope, ids=wanted))
        return [common.payload_to_memory(pid, point.payload) for pid, point in found]

    async def search_dense(self, vector: Sequence[float], flt: MemoryFilter, limit: int) -> list[VectorHit]:
        """Nearest neighbours by cosine similarity, best first (ties by id)."""
        dimension = await self._ready()
        common.check_limit(limit)
        query = _unit(common.check_dense(vector, dimension))
        scored = [
            (sum(q * d for q, d in zip(query, point.dense, strict=True)), pid, point)
            for pid, point in self._select(flt)
        ]
        return self._hits(scored, limit)

    async def search_sparse(
        self, vector: SparseVector, flt: MemoryFilter, limit: int, *, context: bool = False
    ) -> list[VectorHit]:
        """Keyword matches by BM25 (IDF over the whole store, as Qdrant's modifier), best first."""
        await self._ready()
        common.check_limit(limit)
        common.check_sparse(vector)
        if not vector.indices:
            return []
        query = _terms(vector)
        stored = [p.context if context else p.sparse for p in self._data.points.values()]
        total = len(stored)
        frequency = Counter(i for terms in stored for i in terms if i in query)
        weights = {
            i: w * math.log(1 + (total - frequency[i] + 0.5) / (frequency[i] + 0.5)) for i, w in query.items()
        }
        scored = []
        for pid, point in self._select(flt):
            terms = point.context if context else point.sparse
            shared = [i for i in weights if i in terms]
            if shared:  # the inverted index holds only points sharing a term with the query
                scored.append((sum(weights[i] * terms[i] for i in shared), pid, point))
        return self._hits(scored, limit)

    async def search_many(self, flt: MemoryFilter, limit: int, searches: Searches) -> SearchResults:
        """Each search given, run one after the other; a memory found twice is one object."""
        dimension = await self._ready()
        planned, results = common.plan_searches(dimension, limit, searches)
        found: dict[str, Memory] = {}
        for p in planned:
            if isinstance(p.vector, SparseVector):
                hits = await self.search_sparse(p.vector, flt, limit, context=p.name == "context")
            else:
                hits = await self.search_dense(p.vector, flt, limit)
            results[p.name] = [
                VectorHit(memory=found.setdefault(h.memory.id, h.memory), score=h.score) for h in hits
            ]
        return results

    def cached(self, ids: Sequence[str]) -> dict[str, Memory]:
        """None: every read goes to the store."""
        return {}

    async def search_ids(self, flt: MemoryFilter, limit: int, searches: Searches) -> RankedIds:
        """``search_many``'s rankings as (id, score) pairs."""
        found = await self.search_many(flt, limit, searches)
        return {name: [(h.memory.id, h.score) for h in hits] for name, hits in found.items()}

    @staticmethod
    def _hits(scored: list[tuple[float, str, _Point]], limit: int) -> list[VectorHit]:
        best = sorted(scored, key=lambda s: (-s[0], s[1]))[:limit]
        return [VectorHit(memory=common.payload_to_memory(pid, p.payload), score=s) for s, pid, p in best]

    async def scroll(
        self, flt: MemoryFilter, limit: int, offset: str | None = None
    ) -> tuple[list[Memory], str | None]:
        """A page of memories in id order and the id that starts the next page (None at the end)."""
        await self._ready()
        common.check_limit(limit)
        start = common.scroll_offset(offset)
        page: list[Memory] = []
        for pid, point in self._select(flt):
            if start is not None and pid < start:
                continue
            if len(page) == limit:
                return page, pid
            page.append(common.payload_to_memory(pid, point.payload))
        return page, None

    async def count(self, flt: MemoryFilter) -> int:
        await self._ready()
        return sum(1 for _ in self._select(flt))

    async def thread_counts(self, scope: Scope, limit: int) -> dict[str, int]:
        """Number of memories per thread id in ``scope`` (largest first, ties by id, at most ``limit``)."""
        await self._ready()
        common.check_limit(limit)
        threads = Counter(
            str(point.payload[common.THREAD_FIELD])
            for _, point in self._select(MemoryFilter(scope=scope))
            if point.payload.get(common.THREAD_FIELD) is not None
        )
        ordered = sorted(threads.items(), key=lambda item: (-item[1], item[0]))[:limit]
        return dict(ordered)

    async def dense_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, list[float]]:
        """The (normalised, as Qdrant keeps them) dense vectors of the memories among ``ids`` in ``scope``."""
        await self._ready()
        wanted = common.point_ids(ids)
        if not wanted:
            return {}
        return {pid: list(p.dense) for pid, p in self._select(MemoryFilter(scope=scope, ids=wanted))}

    async def scopes(self) -> list[Scope]:
        """Every (project, user) holding a memory, sorted."""
        await self._ready()
        found = {(p.payload["project"], p.payload["user"]) for p in self._data.points.values()}
        return [Scope(project=project, user=user) for project, user in sorted(found)]
