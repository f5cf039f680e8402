"""An Edge store's payload files are read into the page cache in the background, within a bound."""

from __future__ import annotations

import threading
from pathlib import Path

from hybrid_memory.backends import _prewarm
from hybrid_memory.backends.qdrant_edge import SHARD_DIR, EdgeVectorStore
from tests.contract.test_vector_store import DIM, MODEL, make_memory, make_record, scoped


async def test_the_payload_files_of_a_real_store_are_found_and_read_through_within_the_bound(
    tmp_path: Path,
) -> None:
    store = EdgeVectorStore(tmp_path / "vectors")
    await store.open(dimension=DIM, model=MODEL)
    await store.upsert([make_record(make_memory(f"turn {i}")) for i in range(20)])
    await store.close()

    files = _prewarm.payload_files(tmp_path / "vectors" / SHARD_DIR)
    total = sum(p.stat().st_size for p in files)

    assert files
    assert all("payload_storage" in p.parts for p in files)
    assert _prewarm.warm(files, threading.Event()) == min(total, _prewarm.PREWARM_MAX_BYTES)
    assert _prewarm.warm(files, threading.Event(), limit=1000) == 1000
    stopped = threading.Event()
    stopped.set()
    assert _prewarm.warm(files, stopped) == 0


async def test_a_store_answers_while_it_warms_and_closes_without_waiting_for_it(tmp_path: Path) -> None:
    store = EdgeVectorStore(tmp_path / "vectors")
    await store.open(dimension=DIM, model=MODEL)
    await store.upsert([make_record(make_memory("kept"))])
    await store.close()

    await store.open(dimension=DIM, model=MODEL)
    try:
        assert await store.count(scoped()) == 1
    finally:
        await store.close()
