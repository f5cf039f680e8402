"""EdgeHost on a real shard: a call waits for a busy shard, and past its timeout says why it gave up."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import pytest

from hybrid_memory.backends.qdrant_edge import EdgeVectorStore
from hybrid_memory.errors import BackendUnavailableError
from tests.contract.test_vector_store import DIM, MODEL, make_memory, make_record, scoped


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EdgeVectorStore]:
    store = EdgeVectorStore(tmp_path / "vectors", timeout_s=0.2)
    await store.open(dimension=DIM, model=MODEL)
    await store.upsert([make_record(make_memory("kept"))])
    try:
        yield store
    finally:
        await store.close()


async def test_a_call_on_a_shard_busy_past_the_timeout_says_why_and_what_to_do(
    store: EdgeVectorStore,
) -> None:
    lock = store._host._lock
    lock.acquire()
    try:
        with pytest.raises(BackendUnavailableError) as busy:
            await store.count(scoped())
    finally:
        lock.release()

    assert str(busy.value) == (
        f"The memory store at {store._host._path} is busy (building its search index) and did not "
        "answer within 0.2s; try again shortly."
    )
    assert await store.count(scoped()) == 1


async def test_a_call_waits_for_the_shard_and_answers_once_it_is_free(store: EdgeVectorStore) -> None:
    lock = store._host._lock
    answers: list[int] = []

    async def count() -> None:
        answers.append(await store.count(scoped()))

    lock.acquire()
    async with anyio.create_task_group() as tg:
        tg.start_soon(count)
        await anyio.wait_all_tasks_blocked()
        assert answers == []
        lock.release()
    assert answers == [1]
