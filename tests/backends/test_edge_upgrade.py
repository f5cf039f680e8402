"""An embedded store made with other vector settings is refused clearly, and left as it was."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
import qdrant_edge as qe

from hybrid_memory.backends._edge_layout import edge_config
from hybrid_memory.backends.qdrant_edge import SHARD_DIR, EdgeVectorStore
from hybrid_memory.errors import ConflictError
from tests.contract.test_vector_store import make_memory, make_record, scoped


def test_store_without_the_context_vector_is_refused_with_what_to_do(tmp_path: Path) -> None:
    old = qe.EdgeConfig(
        vectors={"dense": qe.EdgeVectorParams(size=4, distance=qe.Distance.Cosine)},
        sparse_vectors={"bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
    )
    qe.EdgeShard.create(str(tmp_path / SHARD_DIR), old).close()
    before = sorted(p.relative_to(tmp_path) for p in (tmp_path / SHARD_DIR).rglob("*"))

    async def open_it() -> None:
        await EdgeVectorStore(tmp_path).open(dimension=4, model="m")

    with pytest.raises(ConflictError, match=r"made with other vector settings than this version") as refused:
        anyio.run(open_it)
    assert "hybrid-memory export FILE" in str(refused.value)
    assert "HYBRID_MEMORY_DATA_DIR" in str(refused.value)
    assert sorted(p.relative_to(tmp_path) for p in (tmp_path / SHARD_DIR).rglob("*")) == before
    # the directory lock was released: the old version could open it again
    qe.EdgeShard.load(str(tmp_path / SHARD_DIR), old).close()


def test_store_made_before_an_index_existed_gains_it_on_open(tmp_path: Path) -> None:
    # Every read filters on expires_at (liveness); unindexed, a 10k-store search spent 10 ms on it.
    qe.EdgeShard.create(str(tmp_path / SHARD_DIR), edge_config(4)).close()

    async def open_and_close() -> None:
        store = EdgeVectorStore(tmp_path)
        await store.open(dimension=4, model="m")
        await store.close()

    anyio.run(open_and_close)
    shard = qe.EdgeShard.load(str(tmp_path / SHARD_DIR), edge_config(4))
    try:
        assert {"created_at", "expires_at"} <= set(shard.info().payload_schema)
    finally:
        shard.close()


def test_a_store_of_float32_vectors_opens_and_keeps_them(tmp_path: Path) -> None:
    # Stores made before float16 vectors: Edge cannot change a stored vector type in place.
    old = qe.EdgeConfig(
        vectors={"dense": qe.EdgeVectorParams(size=4, distance=qe.Distance.Cosine)},
        sparse_vectors={
            "bm25": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf),
            "bm25_ctx": qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf),
        },
    )
    qe.EdgeShard.create(str(tmp_path / SHARD_DIR), old).close()
    memory = make_memory("kept as it was")

    async def write_then_read() -> list[tuple[str, float]]:
        store = EdgeVectorStore(tmp_path)
        await store.open(dimension=4, model="m")
        try:
            await store.upsert([make_record(memory, (1, 0.3, 0, 0))])
            hits = await store.search_dense([1, 0.3, 0, 0], scoped(), 10)
            return [(h.memory.id, round(h.score, 6)) for h in hits]
        finally:
            await store.close()

    assert anyio.run(write_then_read) == [(memory.id, 1.0)]
