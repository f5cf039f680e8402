"""The embedded vector store: Qdrant Edge (``qdrant-edge-py``) running in this process.

A store directory holds ``lock`` (flock'ed by the one owning process, holding its
pid), ``store.json`` (the model and dimension that filled the store) and ``shard/``
(Edge's segments and write-ahead log).

What Edge 0.9.0 does, measured here, and what follows:

- Every call holds the GIL until it returns. Calls run via ``anyio.to_thread`` so
  our Python work is off the loop, but a long Edge call still stalls the loop.
- Calls from several threads are safe, but we serialise them with one lock, so a
  read-check-write (delete, set_payload) is atomic and a request can time out
  behind a long call instead of queueing without bound.
- ``update`` writes the WAL into a memory map without syncing: it survives
  ``kill -9`` but not a power cut. ``flush`` msyncs the WAL and fsyncs segments
  with the GIL held (80-240 ms a write, the whole process stalled), so a write is
  acknowledged once its WAL pages are fsynced instead, one sync shared by the
  writers waiting for it (:mod:`._wal_sync`), and ``flush`` runs when idle and on close.
- It never optimizes by itself, and ``optimize`` (HNSW build once a segment
  passes the indexing threshold; microseconds below it) took 5.5 s for 10k x 384
  on two cores, GIL held. So it runs on a background thread once
  ``OPTIMIZE_AFTER_POINTS`` points were written and the store has been idle for
  ``OPTIMIZE_IDLE_S``, and on close; never on a request.
- It memory-maps its segment files, and a page it read or wrote stays in the
  process's RSS until the segment goes: an index build maps all it merges and
  writes (~5 kB a memory). The host lets go of them around builds and every few
  thousand writes (:mod:`._process_memory`); the page cache keeps them.
- It flocks ``shard/wal`` itself but then only says ``Can't init WAL:
  Kind(WouldBlock)``; our lock file comes first and names the owner. Rust panics
  arrive as ``pyo3_runtime.PanicException`` (a ``BaseException``); inputs known to
  cause one are refused beforehand.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager
from pathlib import Path

import qdrant_edge as qe

from hybrid_memory.backends import _prewarm
from hybrid_memory.backends import _qdrant_common as common
from hybrid_memory.backends._edge_host import SHARD_DIR as SHARD_DIR
from hybrid_memory.backends._edge_host import EdgeHost
from hybrid_memory.backends._memory_cache import MemoryCache
from hybrid_memory.backends.base import RankedIds, SearchResults
from hybrid_memory.models import Memory, MemoryFilter, MemoryRecord, Scope, Searches, SparseVector, VectorHit

logger = logging.getLogger(__name__)

_Ranked = list[list[tuple[str, float]]]
"""Each search's (point id, score) list, best first."""


def edge_filter(flt: MemoryFilter) -> qe.Filter:
    """``flt`` as an Edge filter (its meaning lives in :func:`common.filter_conditions`)."""
    must: list[qe.FieldCondition | qe.HasIdCondition | qe.Filter] = []
    for c in common.filter_conditions(flt):
        if isinstance(c, common.Alive):
            must.append(_edge_alive(c))
        elif isinstance(c, common.MatchValue):
            must.append(qe.FieldCondition(c.key, match=qe.MatchValue(c.value)))
        elif isinstance(c, common.MatchAny):
            must.append(qe.FieldCondition(c.key, match=qe.MatchAny(list(c.values))))
        elif isinstance(c, common.DatetimeRange):
            must.append(qe.FieldCondition(c.key, range=qe.RangeDateTime(gte=c.gte, lt=c.lt)))
        else:
            must.append(qe.HasIdCondition(set(c.ids)))
    return qe.Filter(must=list(must))


def _edge_alive(c: common.Alive) -> qe.Filter:
    unexpired = qe.Filter(
        must=[]
        if c.retained_from is None
        else [qe.FieldCondition("created_at", range=qe.RangeDateTime(gte=c.retained_from))],
        must_not=[qe.FieldCondition("expires_at", range=qe.RangeDateTime(lte=c.now))],
    )
    return qe.Filter(should=[qe.FieldCondition("pinned_kw", match=qe.MatchValue("true")), unexpired])


def _stored_payload(memory: Memory) -> dict[str, object]:
    """The payload of a new point without its empty fields (a null, an empty list): a chat turn's
    payload is a third smaller on disk, and reading it back gives the same memory (they are the
    defaults). A filter treats a missing field as it treats a null one."""
    return {k: v for k, v in common.memory_to_payload(memory).items() if v is not None and v != []}


def _edge_vector(vector: list[float] | SparseVector) -> list[float] | qe.SparseVector:
    if isinstance(vector, SparseVector):
        return qe.SparseVector(list(vector.indices), [float(v) for v in vector.values])
    return vector


class EdgeVectorStore:
    """The ``VectorStore`` over an embedded Qdrant Edge shard in ``path`` (see :class:`EdgeHost`).

    ``timeout_s`` bounds how long a call waits for the store while another call
    (typically a background index build) holds it.
    """

    def __init__(self, path: Path, *, timeout_s: float = 10.0) -> None:
        self._path = Path(path)
        self._host = EdgeHost(self._path, timeout_s=timeout_s)
        self._dimension = 0
        self._cache = MemoryCache()
        self._prewarm: threading.Event | None = None

    async def open(self, *, dimension: int, model: str) -> None:
        """Open or create the store; take the directory lock; start the background optimizer.

        Raises ``StoreLockedError`` when another process owns the directory and
        ``ConflictError`` when another model or dimension filled the store.
        """
        await self._host.open(dimension=dimension, model=model)
        self._dimension = dimension
        self._prewarm = _prewarm.start(self._path / SHARD_DIR)

    def in_use(self) -> AbstractContextManager[None]:
        return self._host.in_use()

    async def close(self) -> None:
        """Stop the background work (waiting out a running index build), flush, unlock."""
        if self._prewarm is not None:
            self._prewarm.set()
        await self._host.close()
        self._cache.clear()

    async def optimize(self) -> bool:
        """Build the indexes that are due now (the store waits meanwhile); True when anything changed."""
        return await self._host.optimize()

    # --- VectorStore ------------------------------------------------------------------------------

    async def upsert(self, records: Sequence[MemoryRecord]) -> None:
        """Insert or replace by ``memory.id``; durable (its WAL fsynced) before it returns."""
        if not records:
            return

        def write(shard: qe.EdgeShard) -> None:
            self._cache.forget(common.point_ids([record.memory.id for record in records]))
            # Built here, in the worker thread: converting a batch of vectors is not free.
            points = []
            for record in records:
                pid, vector = common.point_vectors(record, self._dimension, qe.SparseVector)
                points.append(qe.Point(pid, vector, _stored_payload(record.memory)))
            shard.update(qe.UpdateOperation.upsert_points(points))

        await self._host.run(write)
        await self._host.durable(len(records))

    async def set_payload(self, scope: Scope, memory_id: str, fields: dict[str, object]) -> bool:
        """Update some payload fields of one memory; False when it does not exist in ``scope``."""
        pid = common.point_id(memory_id)
        if pid is None:
            return False
        flt = edge_filter(MemoryFilter(scope=scope, ids=[pid]))

        def write(shard: qe.EdgeShard) -> bool:
            self._cache.forget([pid])
            found, _ = shard.scroll(
                qe.ScrollRequest(limit=1, filter=flt, with_payload=True, with_vector=False)
            )
            if not found:
                return False
            payload = common.payload_update(common.payload_to_memory(found[0].id, found[0].payload), fields)
            shard.update(qe.UpdateOperation.set_payload_by_filter(flt, payload))
            return True

        if not await self._host.run(write):
            return False
        await self._host.durable(0)
        return True

    async def delete(self, scope: Scope, ids: Sequence[str]) -> int:
        """Delete these ids where they belong to ``scope``; returns how many existed."""
        if not common.point_ids(ids):
            return 0
        flt = edge_filter(MemoryFilter(scope=scope, ids=list(ids)))

        def write(shard: qe.EdgeShard) -> int:
            self._cache.forget(common.point_ids(ids))
            existing = shard.count(qe.CountRequest(exact=True, filter=flt))
            if existing:
                shard.update(qe.UpdateOperation.delete_points_by_filter(flt))
            return existing

        existing = await self._host.run(write)
        if existing:
            await self._host.durable(0)
        return existing

    async def get(self, scope: Scope, ids: Sequence[str]) -> list[Memory]:
        """The memories among ``ids`` that exist in ``scope``, in no particular order."""
        records = await self._records(scope, ids, with_vector=False)
        return [common.payload_to_memory(r.id, r.payload) for r in records]

    async def search_dense(self, vector: Sequence[float], flt: MemoryFilter, limit: int) -> list[VectorHit]:
        """Nearest neighbours by cosine similarity, best first."""
        common.check_limit(limit)
        query = qe.Query.Nearest(common.check_dense(vector, self._dimension), using=common.DENSE_VECTOR)
        request = qe.QueryRequest(limit=limit, query=query, filter=edge_filter(flt), with_payload=True)
        return common.hits(await self._host.run(lambda shard: shard.query(request)))

    async def search_sparse(
        self, vector: SparseVector, flt: MemoryFilter, limit: int, *, context: bool = False
    ) -> list[VectorHit]:
        """Keyword matches by BM25 (the shard applies IDF), best first; ``context``: text with context."""
        common.check_limit(limit)
        common.check_sparse(vector)
        if not vector.indices:  # a query of stop words only: no keyword can match
            return []
        sparse = qe.SparseVector(list(vector.indices), [float(v) for v in vector.values])
        query = qe.Query.Nearest(
            sparse, using=common.CONTEXT_SPARSE_VECTOR if context else common.SPARSE_VECTOR
        )
        request = qe.QueryRequest(limit=limit, query=query, filter=edge_filter(flt), with_payload=True)
        return common.hits(await self._host.run(lambda shard: shard.query(request)))

    def _batch(
        self, flt: MemoryFilter, limit: int, searches: Searches
    ) -> tuple[list[str], qe.QueryBatchRequest | None, SearchResults]:
        """The searches as one id-only ``query_batch``, their names, and the results known without asking."""
        planned, results = common.plan_searches(self._dimension, limit, searches)
        if not planned:
            return [], None, results
        edge_flt = edge_filter(flt)
        batch = qe.QueryBatchRequest(
            [
                qe.QueryRequest(
                    limit=limit,
                    query=qe.Query.Nearest(_edge_vector(p.vector), using=p.using),
                    filter=edge_flt,
                    with_payload=False,
                )
                for p in planned
            ]
        )
        return [p.name for p in planned], batch, results

    async def search_many(self, flt: MemoryFilter, limit: int, searches: Searches) -> SearchResults:
        """Several searches as one ``query_batch``: one thread hop, one lock, one planned pass.

        The searches return ids only; each distinct hit's memory is then taken from the
        cache or, when not there, its payload read once (``retrieve``, same lock): the
        searches overlap, and payloads cost more than scores.
        """
        names, batch, results = self._batch(flt, limit, searches)
        if batch is None:
            return results

        def read(shard: qe.EdgeShard) -> tuple[_Ranked, dict[str, Memory], list[qe.Record], int]:
            ranked = [[(str(point.id), point.score) for point in found] for found in shard.query_batch(batch)]
            distinct = list(dict.fromkeys(pid for found in ranked for pid, _ in found))
            cached, generation = self._cache.lookup(distinct)
            missing: list[qe.PointId] = [pid for pid in distinct if pid not in cached]
            records = shard.retrieve(missing, with_payload=True, with_vector=False) if missing else []
            return ranked, cached, records, generation

        # Payloads become Memory objects after the store is released: the next reader need not wait.
        ranked, cached, records, generation = await self._host.run(read)
        fresh = common.memories_by_id(records)
        self._cache.fill(fresh.values(), generation)
        return {**results, **common.hits_from(names, ranked, {**cached, **fresh})}

    async def search_ids(self, flt: MemoryFilter, limit: int, searches: Searches) -> RankedIds:
        """``search_many``'s searches, ids and scores only: no payload is read."""
        names, batch, results = self._batch(flt, limit, searches)
        empty: RankedIds = {name: [] for name in results}
        if batch is None:
            return empty

        def read(shard: qe.EdgeShard) -> _Ranked:
            return [[(str(point.id), point.score) for point in found] for found in shard.query_batch(batch)]

        return {**empty, **dict(zip(names, await self._host.run(read), strict=True))}

    def cached(self, ids: Sequence[str]) -> dict[str, Memory]:
        """The memories among ``ids`` whose decoded copy this process keeps (written or read since open)."""
        return self._cache.lookup(ids)[0]

    async def scroll(
        self, flt: MemoryFilter, limit: int, offset: str | None = None
    ) -> tuple[list[Memory], str | None]:
        """A page of memories in id order and the offset of the next page (None at the end)."""
        common.check_limit(limit)
        by_id = flt.ids is not None
        request = qe.ScrollRequest(
            offset=common.scroll_offset(offset),
            limit=limit,
            filter=edge_filter(flt),
            with_payload=not by_id,
            with_vector=False,
        )
        if by_id:  # recall's fetches of a few turns: the filter decides, the cache spares the payloads
            return await self._scroll_cached(request)
        records, next_offset = await self._host.run(lambda shard: shard.scroll(request))
        page = [common.payload_to_memory(r.id, r.payload) for r in records]
        return page, None if next_offset is None else str(next_offset)

    async def _scroll_cached(self, request: qe.ScrollRequest) -> tuple[list[Memory], str | None]:
        """``scroll`` for ids only, then each memory from the cache or its payload read once (as
        ``search_many`` does)."""

        def read(
            shard: qe.EdgeShard,
        ) -> tuple[list[str], str | None, dict[str, Memory], list[qe.Record], int]:
            found, next_offset = shard.scroll(request)
            ids = [str(r.id) for r in found]
            cached, generation = self._cache.lookup(ids)
            missing: list[qe.PointId] = [pid for pid in ids if pid not in cached]
            records = shard.retrieve(missing, with_payload=True, with_vector=False) if missing else []
            return ids, None if next_offset is None else str(next_offset), cached, records, generation

        ids, next_offset, cached, records, generation = await self._host.read(read)
        fresh = common.memories_by_id(records)
        self._cache.fill(fresh.values(), generation)
        memories = {**cached, **fresh}
        return [memories[pid] for pid in ids if pid in memories], next_offset

    async def count(self, flt: MemoryFilter) -> int:
        """How many memories pass ``flt`` (exact)."""
        request = qe.CountRequest(exact=True, filter=edge_filter(flt))
        return await self._host.run(lambda shard: shard.count(request))

    async def thread_counts(self, scope: Scope, limit: int) -> dict[str, int]:
        """Number of memories per thread id in ``scope`` (largest first, at most ``limit``)."""
        common.check_limit(limit)
        request = qe.FacetRequest(
            common.THREAD_FIELD, limit=limit, exact=True, filter=edge_filter(MemoryFilter(scope=scope))
        )
        response = await self._host.run(lambda shard: shard.facet(request))
        return common.facet_counts(response.hits)

    async def dense_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, list[float]]:
        """The dense vectors of the memories among ``ids`` in ``scope``, by id."""
        return common.dense_by_id(await self._records(scope, ids, with_vector=True))

    async def _records(self, scope: Scope, ids: Sequence[str], *, with_vector: bool) -> list[qe.Record]:
        """The points among ``ids`` in ``scope``: their payloads, or with ``with_vector`` their vectors."""
        wanted = common.point_ids(ids)
        if not wanted:
            return []
        request = qe.ScrollRequest(
            limit=len(wanted),
            filter=edge_filter(MemoryFilter(scope=scope, ids=wanted)),
            with_payload=not with_vector,
            with_vector=with_vector,
        )
        records, _ = await self._host.run(lambda shard: shard.scroll(request))
        return list(records)

    async def scopes(self) -> list[Scope]:
        """Every (project, user) holding a memory, sorted: a facet on project, then on user per project."""

        def read(shard: qe.EdgeShard) -> list[Scope]:
            found: list[Scope] = []
            projects = shard.facet(qe.FacetRequest("project", limit=common.MAX_SCOPES, exact=True))
            for project in projects.hits:
                only = qe.Filter(must=[qe.FieldCondition("project", match=qe.MatchValue(str(project.value)))])
                users = shard.facet(qe.FacetRequest("user", limit=common.MAX_SCOPES, exact=True, filter=only))
                found.extend(Scope(project=str(project.value), user=str(u.value)) for u in users.hits)
            return sorted(found, key=lambda s: (s.project, s.user))

        return await self._host.run(read)
