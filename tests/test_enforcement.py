"""Limits are checked after every write, but a project within them is not read back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hybrid_memory.backends import open_graph_store, open_vector_store
from hybrid_memory.backends.base import VectorStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.models import MessageIn, Scope
from hybrid_memory.service import MemoryService, TaskDraft, ThreadDraft
from hybrid_memory.settings import LifecycleSettings
from tests.conftest import make_settings

SCOPE = Scope(project="test", user="default")


class CountingScrolls:
    """The real vector store, counting how often the service reads a scope back."""

    def __init__(self, inner: VectorStore) -> None:
        self._inner = inner
        self.scrolls = 0

    async def scroll(self, *args: Any, **kwargs: Any) -> Any:
        self.scrolls += 1
        return await self._inner.scroll(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def messages(*numbers: int) -> list[MessageIn]:
    return [MessageIn(role="user", content=f"Message {n} is about topic {n}.", id=f"m{n}") for n in numbers]


async def test_writes_within_the_limits_read_nothing_back_and_crossing_one_evicts(
    tmp_path: Path, embedder: Embedder
) -> None:
    limits = LifecycleSettings(max_items=5, summarize_on_evict=False)
    settings = make_settings(tmp_path, lifecycle=limits)
    async with (
        open_vector_store(settings, dimension=embedder.dimension, model=embedder.model_name) as real,
        open_graph_store(settings) as graph,
    ):
        vectors = CountingScrolls(real)
        service = MemoryService(settings=settings, vectors=vectors, graph=graph, embedder=embedder)  # type: ignore[arg-type]
        await service.remember_thread(SCOPE, ThreadDraft("t1", messages(1, 2)))
        assert vectors.scrolls == 1  # the project's first write counts it once

        await service.remember_thread(SCOPE, ThreadDraft("t2", messages(3, 4)))
        await service.record_task(SCOPE, TaskDraft(description="Ship it", outcome="Shipped", success=True))
        assert vectors.scrolls == 1

        result = await service.remember_thread(SCOPE, ThreadDraft("t3", messages(5, 6)))
        assert result.evicted == 2
        assert vectors.scrolls == 2
        assert (await service.stats(SCOPE)).items == 5

        await service.remember_thread(SCOPE, ThreadDraft("t3", messages(7)))
        assert vectors.scrolls == 4  # stats read the project; the counts were exact at 5, so 6 crosses
        assert (await service.stats(SCOPE)).items == 5
