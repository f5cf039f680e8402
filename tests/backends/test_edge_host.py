"""EdgeHost on a real shard: a call waits for a busy shard, and past its timeout says why it gave up."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import anyio
import pytest

from hybrid_memory.backends.qdrant_edge import EdgeVectorStore
from hybrid_memory.errors import BackendUnavailableError
from hybrid_memory.models import NoteType
from tests.contract.test_vector_store import ALPHA, DIM, MODEL, T0, make_memory, make_record, scoped


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


async def test_a_read_by_id_answers_in_the_calling_thread_when_the_shard_is_free_and_waits_when_it_is_not(
    store: EdgeVectorStore,
) -> None:
    [kept], _ = await store.scroll(scoped(), 5)
    flt = scoped().model_copy(update={"ids": [kept.id]})
    here = threading.get_ident()
    threads: list[int] = []

    def read(shard: object) -> None:
        threads.append(threading.get_ident())

    await store._host.read(read)  # type: ignore[arg-type]
    assert threads == [here]

    answers: list[list[str]] = []

    async def scroll() -> None:
        page, _ = await store.scroll(flt, 5)
        answers.append([m.id for m in page])

    lock = store._host._lock
    lock.acquire()  # an index build holds the shard: the read waits for it off the loop
    async with anyio.create_task_group() as tg:
        tg.start_soon(scroll)
        await anyio.wait_all_tasks_blocked()
        assert answers == []
        lock.release()
    assert answers == [[kept.id]]
    await store._host.read(read)  # type: ignore[arg-type]
    assert threads[-1] == here


async def test_a_memory_is_stored_without_its_empty_fields_and_reads_back_the_same(
    store: EdgeVectorStore,
) -> None:
    sparse = make_memory("sparse", thread_id="t1", message_id="m1")
    full = make_memory(
        "full", tags=["a"], importance=0.5, note_type=NoteType.FACT, expires_at=T0 + timedelta(days=9)
    )
    await store.upsert([make_record(sparse), make_record(full)])

    raw = await store._host.run(
        lambda shard: {
            str(r.id): r.payload
            for r in shard.retrieve([sparse.id, full.id], with_payload=True, with_vector=False)
        }
    )
    assert not {"tags", "importance", "note_type", "expires_at", "next_id", "code"} & set(raw[sparse.id])
    assert {"tags", "importance", "note_type", "expires_at"} <= set(raw[full.id])
    assert sorted(await store.get(ALPHA, [sparse.id, full.id]), key=lambda m: m.text) == [full, sparse]
    # a field filled later and emptied again reads back empty
    assert await store.set_payload(ALPHA, full.id, {"expires_at": None, "tags": []})
    [read] = await store.get(ALPHA, [full.id])
    assert (read.expires_at, read.tags) == (None, [])
