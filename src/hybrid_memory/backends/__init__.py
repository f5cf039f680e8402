"""Storage backends behind the ``VectorStore`` and ``GraphStore`` protocols.

The only place that knows which database is configured.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.settings import Settings

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

        store = EdgeVectorStore(settings.data_dir / "vectors", timeout_s=settings.backend_timeout_s)
    await store.open(dimension=dimension, model=model)
    try:
        yield store
    finally:
        await store.close()


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

        settings.data_dir.mkdir(parents=True, exist_ok=True)
        store = SqliteGraphStore(settings.data_dir / "graph.sqlite3", timeout_s=settings.backend_timeout_s)
    await store.open()
    try:
        yield store
    finally:
        await store.close()
