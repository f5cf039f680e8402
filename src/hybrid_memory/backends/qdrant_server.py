"""The vector store on a Qdrant server or cluster, over qdrant-client's async REST client.

Never qdrant-client's local mode (``":memory:"`` or a path): measured here 4,500x
slower than Qdrant Edge, which is the embedded store.

Which model filled a collection is kept in the collection's own metadata (Qdrant
1.16 and later) under ``"hybrid_memory"``: it travels with the collection, shows
in the dashboard, and stays out of every count, scroll and export, which a
reserved point would not; renaming the configured collection after the model
would surprise the user. The dimension is also checked against the collection's
vector parameters, which are authoritative, so a server too old for metadata
still refuses vectors of another size. A collection without the metadata whose
vectors fit is adopted, and the metadata added where the server supports it.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime
from functools import partial

from qdrant_client import models

from hybrid_memory.backends import _qdrant_common as common
from hybrid_memory.backends._qdrant_server_host import METADATA_KEY as METADATA_KEY
from hybrid_memory.backends._qdrant_server_host import ServerCollection
from hybrid_memory.backends.base import RankedIds, SearchResults
from hybrid_memory.models import Memory, MemoryFilter, MemoryRecord, Scope, Searches, SparseVector, VectorHit

logger = logging.getLogger(__name__)


def _server_alive(c: common.Alive) -> models.Filter:
    since = (
        []
        if c.retained_from is None
        else [
            models.FieldCondition(
                key="created_at", range=models.DatetimeRange(gte=datetime.fromisoformat(c.retained_from))
            )
        ]
    )
    expired = models.FieldCondition(
        key="expires_at", range=models.DatetimeRange(lte=datetime.fromisoformat(c.now))
    )
    unexpired = models.Filter(must=list(since), must_not=[expired])
    pinned = models.FieldCondition(key="pinned_kw", match=models.MatchValue(value="true"))
    return models.Filter(should=[pinned, unexpired])


def server_filter(flt: MemoryFilter) -> models.Filter:
    """``flt`` as a qdrant-client filter (its meaning lives in :func:`common.filter_conditions`)."""
    must: list[models.Condition] = []
    for c in common.filter_conditions(flt):
        if isinstance(c, common.Alive):
            must.append(_server_alive(c))
        elif isinstance(c, common.MatchValue):
            must.append(models.FieldCondition(key=c.key, match=models.MatchValue(value=c.value)))
        elif isinstance(c, common.MatchAny):
            must.append(models.FieldCondition(key=c.key, match=models.MatchAny(any=list(c.values))))
        elif isinstance(c, common.DatetimeRange):
            gte = None if c.gte is None else datetime.fromisoformat(c.gte)
            lt = None if c.lt is None else datetime.fromisoformat(c.lt)
            must.append(models.FieldCondition(key=c.key, range=models.DatetimeRange(gte=gte, lt=lt)))
        else:
            ids: list[models.ExtendedPointId] = list(c.ids)
            must.append(models.HasIdCondition(has_id=ids))
    return models.Filter(must=must)


def _server_vector(vector: list[float] | SparseVector) -> list[float] | models.SparseVector:
    if isinstance(vector, SparseVector):
        return models.SparseVector(indices=list(vector.indices), values=list(vector.values))
    return vector


def _sparse_vector(indices: list[int], values: list[float]) -> models.SparseVector:
    return models.SparseVector(indices=indices, values=values)


class QdrantServerVectorStore:
    """The ``VectorStore`` in collection ``collection`` of the Qdrant server at ``url``.

    Every call is bounded by ``timeout_s``; a server that cannot be reached raises
    ``BackendUnavailableError``, any other failure ``BackendError``.
    """

    def __init__(self, url: str, api_key: str | None, collection: str, *, timeout_s: float) -> None:
        self._host = ServerCollection(url, api_key, collection, timeout_s=timeout_s)
        self._collection = collection
        self._dimension = 0

    async def open(self, *, dimension: int, model: str) -> None:
        """Connect; create the collection and its payload indexes if missing; check the model.

        Raises ``BackendUnavailableError`` when the server does not answer and
        ``ConflictError`` when the collection holds another model's vectors.
        """
        await self._host.open(dimension=dimension, model=model)
        self._dimension = dimension

    def in_use(self) -> AbstractContextManager[None]:
        """Nothing to hold back: the server schedules its own optimizations."""
        return nullcontext()

    async def close(self) -> None:
        """Close the connection pool."""
        await self._host.close()

    # --- VectorStore ------------------------------------------------------------------------------

    async def upsert(self, records: Sequence[MemoryRecord]) -> None:
        """Insert or replace by ``memory.id``; returns once the server has applied the write."""
        if not records:
            return
        client = self._host.client()
        points = []
        for record in records:
            pid, vector = common.point_vectors(
                record,
                self._dimension,
                lambda indices, values: models.SparseVector(indices=indices, values=values),
            )
            points.append(
                models.PointStruct(id=pid, vector=vector, payload=common.memory_to_payload(record.memory))
            )
        await self._host.call(lambda: client.upsert(self._collection, points=points, wait=True))

    async def set_payload(self, scope: Scope, memory_id: str, fields: dict[str, object]) -> bool:
        """Update some payload fields of one memory; False when it does not exist in ``scope``."""
        client = self._host.client()
        pid = common.point_id(memory_id)
        if pid is None:
            return False
        flt = server_filter(MemoryFilter(scope=scope, ids=[pid]))
        found, _ = await self._host.call(
            lambda: client.scroll(self._collection, scroll_filter=flt, limit=1, with_payload=True)
        )
        if not found:
            return False
        payload = common.payload_update(common.payload_to_memory(found[0].id, found[0].payload), fields)
        # Selected by the scoped filter, not by id alone, so the write cannot leave the scope.
        await self._host.call(
            lambda: client.set_payload(self._collection, payload=payload, points=flt, wait=True)
        )
        return True

    async def delete(self, scope: Scope, ids: Sequence[str]) -> int:
        """Delete these ids where they belong to ``scope``; returns how many existed."""
        client = self._host.client()
        if not common.point_ids(ids):
            return 0
        flt = server_filter(MemoryFilter(scope=scope, ids=list(ids)))
        existing = (
            await self._host.call(lambda: client.count(self._collection, count_filter=flt, exact=True))
        ).count
        if existing:
            selector = models.FilterSelector(filter=flt)
            await self._host.call(
                lambda: client.delete(self._collection, points_selector=selector, wait=True)
            )
        return existing

    async def get(self, scope: Scope, ids: Sequence[str]) -> list[Memory]:
        """The memories among ``ids`` that exist in ``scope``, in no particular order."""
        client = self._host.client()
        wanted = common.point_ids(ids)
        if not wanted:
            return []
        flt = server_filter(MemoryFilter(scope=scope, ids=wanted))
        records, _ = await self._host.call(
            lambda: client.scroll(self._collection, scroll_filter=flt, limit=len(wanted), with_payload=True)
        )
        return [common.payload_to_memory(r.id, r.payload) for r in records]

    async def search_dense(self, vector: Sequence[float], flt: MemoryFilter, limit: int) -> list[VectorHit]:
        """Nearest neighbours by cosine similarity, best first."""
        client = self._host.client()
        common.check_limit(limit)
        query = common.check_dense(vector, self._dimension)
        response = await self._host.call(
            lambda: client.query_points(
                self._collection,
                query=query,
                using=common.DENSE_VECTOR,
                query_filter=server_filter(flt),
                limit=limit,
                with_payload=True,
            )
        )
        return common.hits(response.points)

    async def search_sparse(
        self, vector: SparseVector, flt: MemoryFilter, limit: int, *, context: bool = False
    ) -> list[VectorHit]:
        """Keyword matches by BM25 (the server applies IDF), best first; ``context``: text with context."""
        client = self._host.client()
        common.check_limit(limit)
        common.check_sparse(vector)
        if not vector.indices:  # a query of stop words only: no keyword can match
            return []
        query = models.SparseVector(indices=list(vector.indices), values=list(vector.values))
        response = await self._host.call(
            lambda: client.query_points(
                self._collection,
                query=query,
                using=common.CONTEXT_SPARSE_VECTOR if context else common.SPARSE_VECTOR,
                query_filter=server_filter(flt),
                limit=limit,
                with_payload=True,
            )
        )
        return common.hits(response.points)

    async def search_many(self, flt: MemoryFilter, limit: int, searches: Searches) -> SearchResults:
        """Several searches as one ``query_batch_points`` request: one round trip."""
        client = self._host.client()
        planned, results = common.plan_searches(self._dimension, limit, searches)
        if not planned:
            return results
        query_filter = server_filter(flt)
        requests = [
            models.QueryRequest(
                query=_server_vector(p.vector),
                using=p.using,
                filter=query_filter,
                limit=limit,
                with_payload=True,
            )
            for p in planned
        ]
        responses = await self._host.call(
            lambda: client.query_batch_points(self._collection, requests=requests)
        )
        found = [r.points for r in responses]
        return {**results, **common.hits_by_search([p.name for p in planned], found)}

    def cached(self, ids: Sequence[str]) -> dict[str, Memory]:
        """None: every read goes to the store."""
        return {}

    async def search_ids(self, flt: MemoryFilter, limit: int, searches: Searches) -> RankedIds:
        """``search_many``'s rankings as (id, score) pairs."""
        found = await self.search_many(flt, limit, searches)
        return {name: [(h.memory.id, h.score) for h in hits] for name, hits in found.items()}

    async def scroll(
        self, flt: MemoryFilter, limit: int, offset: str | None = None
    ) -> tuple[list[Memory], str | None]:
        """A page of memories in id order and the offset of the next page (None at the end)."""
        client = self._host.client()
        common.check_limit(limit)
        start = common.scroll_offset(offset)
        records, next_offset = await self._host.call(
            lambda: client.scroll(
                self._collection,
                scroll_filter=server_filter(flt),
                limit=limit,
                offset=start,
                with_payload=True,
            )
        )
        page = [common.payload_to_memory(r.id, r.payload) for r in records]
        return page, None if next_offset is None else str(next_offset)

    async def count(self, flt: MemoryFilter) -> int:
        """How many memories pass ``flt`` (exact)."""
        client = self._host.client()
        result = await self._host.call(
            lambda: client.count(self._collection, count_filter=server_filter(flt), exact=True)
        )
        return result.count

    async def thread_counts(self, scope: Scope, limit: int) -> dict[str, int]:
        """Number of memories per thread id in ``scope`` (largest first, at most ``limit``)."""
        client = self._host.client()
        common.check_limit(limit)
        flt = server_filter(MemoryFilter(scope=scope))
        response = await self._host.call(
            lambda: client.facet(
                self._collection, common.THREAD_FIELD, facet_filter=flt, limit=limit, exact=True
            )
        )
        return common.facet_counts(response.hits)

    async def dense_vectors(self, scope: Scope, ids: Sequence[str]) -> dict[str, list[float]]:
        """The dense vectors of the memories among ``ids`` in ``scope``, by id."""
        client = self._host.client()
        wanted = common.point_ids(ids)
        if not wanted:
            return {}
        flt = server_filter(MemoryFilter(scope=scope, ids=wanted))
        records, _ = await self._host.call(
            lambda: client.scroll(
                self._collection,
                scroll_filter=flt,
                limit=len(wanted),
                with_payload=False,
                with_vectors=[common.DENSE_VECTOR],
            )
        )
        return common.dense_by_id(records)

    async def scopes(self) -> list[Scope]:
        """Every (project, user) holding a memory, sorted: a facet on project, then on user per project."""
        client = self._host.client()
        projects = await self._host.call(
            lambda: client.facet(self._collection, "project", limit=common.MAX_SCOPES, exact=True)
        )
        found: list[Scope] = []
        for hit in projects.hits:
            project = str(hit.value)
            only = models.Filter(
                must=[models.FieldCondition(key="project", match=models.MatchValue(value=project))]
            )
            users = await self._host.call(
                partial(
                    client.facet,
                    self._collection,
                    "user",
                    facet_filter=only,
                    limit=common.MAX_SCOPES,
                    exact=True,
                )
            )
            found.extend(Scope(project=project, user=str(u.value)) for u in users.hits)
        return sorted(found, key=lambda s: (s.project, s.user))
