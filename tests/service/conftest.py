"""The service over in-memory stores and the fake embedder: use cases tested without a model.

Every test builds its service through :func:`build` (the ``make_service`` fixture),
so a change to how ``MemoryService`` is put together is made here once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from hybrid_memory.backends.in_memory_graph import InMemoryGraphStore
from hybrid_memory.backends.in_memory_vectors import InMemoryVectorStore
from hybrid_memory.models import MemoryFilter, MessageIn, Scope
from hybrid_memory.service import MemoryService
from hybrid_memory.settings import LifecycleSettings, Settings
from tests.fakes import FakeEmbedder

SCOPE = Scope(project="test")


@dataclass
class Harness:
    """A service and the stores and embedder under it, for tests to look behind the use cases."""

    service: MemoryService
    vectors: InMemoryVectorStore
    graph: InMemoryGraphStore
    embedder: FakeEmbedder

    async def count(self, **conditions: object) -> int:
        return await self.vectors.count(MemoryFilter(scope=SCOPE, **conditions))


async def build(data_dir: Path, lifecycle: LifecycleSettings | None = None, **overrides: object) -> Harness:
    settings = Settings(
        data_dir=data_dir,
        project=SCOPE.project,
        lifecycle=lifecycle or LifecycleSettings(),
        **overrides,  # type: ignore[arg-type]
    )
    embedder = FakeEmbedder()
    vectors, graph = InMemoryVectorStore(), InMemoryGraphStore()
    await vectors.open(dimension=embedder.dimension, model=embedder.model_name)
    await graph.open()
    service = MemoryService(settings=settings, vectors=vectors, graph=graph, embedder=embedder)
    return Harness(service=service, vectors=vectors, graph=graph, embedder=embedder)


MakeService = Callable[..., Awaitable[Harness]]


@pytest.fixture
def make_service(tmp_path: Path) -> MakeService:
    """``await make_service(lifecycle=LifecycleSettings(max_items=3), chunk_tokens=16)``."""

    async def make(lifecycle: LifecycleSettings | None = None, **overrides: object) -> Harness:
        return await build(tmp_path / "data", lifecycle, **overrides)

    return make


@pytest.fixture
async def harness(make_service: MakeService) -> Harness:
    return await make_service()


def messages(*turns: str, **fields: object) -> list[MessageIn]:
    """Alternating user/assistant messages with ids m0, m1, ..."""
    roles = ("user", "assistant")
    return [MessageIn(role=roles[i % 2], content=text, id=f"m{i}", **fields) for i, text in enumerate(turns)]
