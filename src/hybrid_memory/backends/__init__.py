"""Storage backends behind the ``VectorStore`` and ``GraphStore`` protocols.

The only place that knows which database is configured.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, cast

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.backends.reconnecting import Reconnecting
from hybrid_memory.errors import BackendUnavailableError
from hybrid_memory.private import make_private
from hybrid_memory.settings import Settings

logger = logging.getLogger(__name__)

__all__ = ["GraphStore", "VectorStore", "open_graph_store", "open_vector_store"]


def _secret(value: object) -> str | None:
    get = getattr(value, "get_secret_value", None)
    return get() if get is not None else None


@asynccontextmanager
async def open_vector_store(settings: Settings, *, dimension: int, model: str) -> AsyncIterator[VectorStore]:
    store: VectorStore
    if settings.resolved_vector_backend == "qdrant":
        from hybrid_memory.backends.qdrant_server import QdrantServerVectorStore

        assert settings.qdrant.url is not None  # the settings validator guarantees it
        store = QdrantServerVectorStore(
            settings.qdrant.url,
            _secret(settings.qdrant.api_key),
            settings.qdrant.collection,
            timeout_s=settings.qdrant.timeout_s,
        )
    else:
        from hybrid_memory.backends.qdrant_edge import EdgeVectorStore

        make_private(settings.data_dir)
        store = EdgeVectorStore(settings.data_dir / "vectors", timeout_s=settings.backend_timeout_s)
        await store.open(dimension=dimension, model=model)
        try:
            yield store
        finally:
            await store.close()
        return

    async def reopen() -> None:
        await store.open(dimension=dimension, model=model)

    async with _server_store(store, reopen, "vector store", "QDRANT_URL", settings.qdrant.url) as opened:
        yield cast(VectorStore, opened)


@asynccontextmanager
async def open_graph_store(settings: Settings) -> AsyncIterator[GraphStore]:
    store: GraphStore
    if settings.resolved_graph_backend == "neo4j":
        from hybrid_memory.backends.neo4j_graph import Neo4jGraphStore

        assert settings.neo4j.uri is not None  # the settings validator guarantees it
        store = Neo4jGraphStore(
            settings.neo4j.uri,
            settings.neo4j.user,
            _secret(settings.neo4j.password),
            settings.neo4j.database,
            timeout_s=settings.neo4j.timeout_s,
            dialect=settings.neo4j.dialect,
        )
    else:
        from hybrid_memory.backends.sqlite_graph import SqliteGraphStore

        make_private(settings.data_dir)
        store = SqliteGraphStore(settings.data_dir / "graph.sqlite3", timeout_s=settings.backend_timeout_s)
        await store.open()
        try:
            yield store
        finally:
            await store.close()
        return

    async with _server_store(store, store.open, "graph store", "NEO4J_URI", settings.neo4j.uri) as opened:
        yield cast(GraphStore, opened)


@asynccontextmanager
async def _server_store(
    store: Any, reopen: Callable[[], Awaitable[None]], what: str, env: str, address: str
) -> AsyncIterator[Any]:
    """A server that is down at start degrades the tools that need it instead of stopping the process."""
    opened: Any = store
    try:
        await reopen()
    except BackendUnavailableError as exc:
        opened = Reconnecting(store, reopen, what, env, address)
        logger.warning("%s; serving without it until it answers", opened.failed(exc))
    try:
        yield opened
    finally:
        await opened.close()
