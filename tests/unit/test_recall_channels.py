"""The vector channels of one recall share one store call and still rank on their own."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from hybrid_memory.backends.base import SearchResults
from hybrid_memory.errors import BackendUnavailableError
from hybrid_memory.models import Memory, MemoryFilter, MemoryKind, Scope, Searches, SparseVector, VectorHit
from hybrid_memory.service.recall import RecallConfig, RecallOptions
from hybrid_memory.service.recall.channels import gather, searches
from hybrid_memory.service.recall.state import plan

SCOPE = Scope(project="p")
NOW = datetime(2024, 5, 1, tzinfo=UTC)


def memory(name: str) -> Memory:
    return Memory(id=name, kind=MemoryKind.MESSAGE, text=name, project="p", created_at=NOW)


class OneCallStore:
    """Answers search_many from fixed lists and counts the calls; fails when told to."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail = fail

    async def search_many(self, flt: MemoryFilter, limit: int, searches: Searches) -> SearchResults:
        self.calls.append(
            {
                "dense": searches.dense is not None,
                "keyword": searches.keyword is not None,
                "context": searches.context,
            }
        )
        if self.fail:
            raise BackendUnavailableError("The memory store is busy; try again shortly.")
        a, b = memory("a"), memory("b")
        return {
            "dense": [VectorHit(memory=a, score=0.9), VectorHit(memory=b, score=0.5)],
            "keyword": [VectorHit(memory=b, score=3.0)],
            "context": [],
        }


async def test_the_vector_channels_share_one_store_call_and_keep_their_own_rankings() -> None:
    store = OneCallStore()
    state = plan(SCOPE, "q", RecallOptions(kinds=[MemoryKind.MESSAGE]), NOW, RecallConfig())
    sparse = SparseVector(indices=[1], values=[1.0])

    channels = searches(state, RecallConfig(), vectors=store, dense=[1.0], sparse=sparse)
    await gather(state, channels, timeout_s=5)

    assert len(store.calls) == 1
    assert [(h.id, h.rank) for h in state.channels["dense"]] == [("a", 1), ("b", 2)]
    assert [(h.id, h.rank) for h in state.channels["keyword"]] == [("b", 1)]
    assert state.channels["context"] == []
    assert set(state.memories) == {"a", "b"}


async def test_a_failed_store_call_skips_every_channel_that_shared_it() -> None:
    store = OneCallStore(fail=True)
    state = plan(SCOPE, "q", RecallOptions(kinds=[MemoryKind.MESSAGE]), NOW, RecallConfig())

    channels = searches(
        state,
        RecallConfig(),
        vectors=store,
        dense=[1.0],
        sparse=SparseVector(indices=[], values=[]),  # type: ignore[arg-type]
    )
    await gather(state, channels, timeout_s=5)

    assert len(store.calls) == 1
    assert state.skipped == {
        name: "The memory store is busy; try again shortly." for name in ("dense", "keyword", "context")
    }
    assert state.channels == {}
