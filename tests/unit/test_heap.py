"""The served process collects garbage rarely and leaves start-up's objects out of collections."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from mcp import Client

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.server import build_server, heap
from hybrid_memory.settings import Settings


@pytest.fixture
def restored_gc() -> Iterator[None]:
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


@pytest.mark.usefixtures("restored_gc")
def test_tune_raises_the_thresholds_and_settle_freezes_what_is_alive() -> None:
    gc.unfreeze()
    heap.tune()
    heap.settle()

    assert gc.get_threshold() == heap.THRESHOLDS
    assert gc.get_freeze_count() > 0


async def test_on_open_runs_once_the_stores_are_open(settings: Settings, embedder: Embedder) -> None:
    opened: list[bool] = []
    server = build_server(settings, embedder=embedder, on_open=lambda: opened.append(True))

    async with Client(server) as client:
        result = await client.call_tool("memory_stats", {})

    assert not result.is_error
    assert opened == [True]
