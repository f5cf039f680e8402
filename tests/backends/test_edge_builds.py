"""When the Edge store builds its index: never on the way out, still under constant load, and a build
cut short leaves nothing behind (reopening removes its debris and keeps every write)."""

from __future__ import annotations

import logging
import signal
import subprocess
import sys
import time
from pathlib import Path

import anyio
import pytest

from hybrid_memory.backends import _edge_host
from hybrid_memory.backends._edge_host import SHARD_DIR, TEMP_SEGMENTS_DIR
from hybrid_memory.backends.qdrant_edge import EdgeVectorStore
from tests.backends.build_and_die import BATCH, DIMENSION, records
from tests.contract.test_vector_store import MODEL, scoped

pytestmark = pytest.mark.subprocess

REPO = Path(__file__).resolve().parents[2]
POINTS = 8000
"""Above Edge's indexing threshold (10 MB of vectors), so the optimize builds an HNSW segment."""


def build_and_kill(path: Path, first_id: int) -> int:
    """Fill a store in a child process, kill it -9 mid-build; the number of points it acknowledged."""
    child = subprocess.Popen(
        [sys.executable, "-m", "tests.backends.build_and_die", str(path), str(first_id), str(POINTS)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None
    acked = 0
    builds = path / SHARD_DIR / TEMP_SEGMENTS_DIR
    deadline = time.monotonic() + 300
    try:
        for line in child.stdout:  # ends when the child does
            if line.startswith("acked "):
                acked = int(line.split()[1])
            elif line.strip() == "building":
                break
        # Edge creates the segment builder's directory when the build starts.
        while not any(builds.glob("segment_builder_*")):
            assert child.poll() is None, "the build finished before it could be interrupted"
            assert time.monotonic() < deadline, "the build did not start"
            time.sleep(0.005)
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
        child.stdout.close()
    return acked


async def test_a_killed_index_build_leaves_no_debris_and_loses_no_write(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "vectors"
    builds = path / SHARD_DIR / TEMP_SEGMENTS_DIR
    acked = 0
    for _ in range(2):
        acked += build_and_kill(path, first_id=acked)
        assert [p.name[:16] for p in builds.iterdir()] == ["segment_builder_"]

        caplog.clear()
        store = EdgeVectorStore(path, timeout_s=60)
        with caplog.at_level(logging.WARNING, logger="hybrid_memory.backends._edge_host"):
            await store.open(dimension=DIMENSION, model=MODEL)
        try:
            assert list(builds.iterdir()) == []
            [removed] = [
                r.getMessage() for r in caplog.records if "interrupted index builds" in r.getMessage()
            ]
            assert removed.startswith(f"removed 1 leftovers of interrupted index builds from {builds} (")
            assert await store.count(scoped()) == acked
        finally:
            await store.close()


async def dense_indexed(store: EdgeVectorStore) -> int:
    """Points whose dense vector is in an HNSW index (Edge counts every named vector it indexed)."""
    info = await store._host.run(lambda shard: shard.info())
    return int(info.indexed_vectors_count) - 2 * int(
        info.points_count
    )  # both sparse vectors are always indexed


async def built(store: EdgeVectorStore) -> None:
    """Return once the store has built its dense index (within a bound)."""
    with anyio.fail_after(300):
        while await dense_indexed(store) == 0:  # noqa: ASYNC110 - the store signals nothing; poll it
            await anyio.sleep(0.1)


async def test_closing_builds_no_index_and_the_next_open_builds_it_when_idle(
    tmp_path: Path,
) -> None:
    path = tmp_path / "vectors"
    store = EdgeVectorStore(path, timeout_s=60)
    await store.open(dimension=DIMENSION, model=MODEL)
    for first in range(0, POINTS, BATCH):
        await store.upsert(records(first, BATCH))
    await store.close()  # a build is due: POINTS pending, past Edge's indexing threshold

    store = EdgeVectorStore(path, timeout_s=60)
    await store.open(dimension=DIMENSION, model=MODEL)
    try:
        assert await dense_indexed(store) == 0
        await built(store)  # after the store's own quiet and idle waits
        assert await store.count(scoped()) == POINTS
    finally:
        await store.close()


async def test_a_store_written_without_pause_still_builds_its_index(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_edge_host, "OPTIMIZE_UNDER_LOAD_S", 1.0)
    store = EdgeVectorStore(tmp_path / "vectors", timeout_s=60)
    await store.open(dimension=DIMENSION, model=MODEL)
    written = 0
    try:
        with anyio.fail_after(300):
            # Never idle for OPTIMIZE_IDLE_S: each write follows the last at once.
            while written < POINTS or await dense_indexed(store) == 0:
                await store.upsert(records(written, BATCH))
                written += BATCH
        assert await store.count(scoped()) == written
    finally:
        await store.close()


async def test_an_idle_time_build_waits_while_a_request_is_being_served(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_edge_host, "OPTIMIZE_IDLE_S", 0.2)
    monkeypatch.setattr(_edge_host, "OPEN_QUIET_S", 0.2)
    store = EdgeVectorStore(tmp_path / "vectors", timeout_s=60)
    await store.open(dimension=DIMENSION, model=MODEL)
    try:
        with store.in_use():  # a request that writes, then computes for a while
            for first in range(0, POINTS, BATCH):
                await store.upsert(records(first, BATCH))
            await anyio.sleep(10 * _edge_host.OPTIMIZE_IDLE_S)
            assert await dense_indexed(store) == 0
        await built(store)  # served: the build follows once the store has been idle
    finally:
        await store.close()
