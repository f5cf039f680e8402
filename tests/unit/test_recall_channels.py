"""The vector channels of one recall share one store call and still rank on their own."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from hybrid_memory.backends.base import RankedIds
from hybrid_memory.errors import BackendUnavailableError
from hybrid_memory.models import Memory, MemoryFilter, MemoryKind, Scope, Searches, SparseVector
from hybrid_memory.service.recall import RecallConfig, RecallOptions, depth
from hybrid_memory.service.recall.channels import gather, searches
from hybrid_memory.service.recall.ranking import ChannelHit
from hybrid_memory.service.recall.state import plan

SCOPE = Scope(project="p")
NOW = datetime(2024, 5, 1, tzinfo=UTC)


class OneCallStore:
    """Answers search_ids from fixed lists and counts the calls; fails when told to."""

    def __init__(self, fail: bool = False) -> None:
        self.calls: list[dict[str, Any]] = []
        self.fail = fail

    async def search_ids(self, flt: MemoryFilter, limit: int, searches: Searches) -> RankedIds:
        self.calls.append(
            {
                "dense": searches.dense is not None,
                "keyword": searches.keyword is not None,
                "context": searches.context,
            }
        )
        if self.fail:
            raise BackendUnavailableError("The memory store is busy; try again shortly.")
        return {"dense": [("a", 0.9), ("b", 0.5)], "keyword": [("b", 3.0)], "context": []}


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
    assert state.memories == {}  # read later, for the candidates that can rank


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


class ReadsByIds:
    """Answers reads by id (``scroll`` with ``ids``) for the memories it holds; records each read."""

    def __init__(self, memories: list[Memory]) -> None:
        self.memories = {m.id: m for m in memories}
        self.reads: list[list[str]] = []

    def cached(self, ids: Sequence[str]) -> dict[str, Memory]:
        return {}

    async def scroll(
        self, flt: MemoryFilter, limit: int, offset: str | None = None
    ) -> tuple[list[Memory], str | None]:
        assert flt.ids is not None
        assert flt.kinds == [MemoryKind.MESSAGE]
        self.reads.append(list(flt.ids))
        return [self.memories[i] for i in flt.ids if i in self.memories], None


def turn(mid: str) -> Memory:
    return Memory(id=mid, kind=MemoryKind.MESSAGE, text=f"turn {mid}", project="p", created_at=NOW)


async def test_the_keyword_channels_best_candidates_are_read_beforehand_and_not_read_again() -> None:
    store = ReadsByIds([turn(f"k{n}") for n in range(30)] + [turn("d0")])
    state = plan(SCOPE, "q", RecallOptions(limit=5, kinds=[MemoryKind.MESSAGE]), NOW, RecallConfig())
    state.channels = {
        "keyword": [ChannelHit(f"k{n}", n + 1, 30.0 - n) for n in range(30)],
        "context": [ChannelHit("k1", 1, 5.0), ChannelHit("gone", 2, 4.0)],
    }

    await depth.prefetch(state, store, timeout_s=5)  # type: ignore[arg-type]

    # (2 x limit + 10) // 2 = 10 of each keyword channel, each id once; one deleted since is not there.
    assert store.reads == [[*(f"k{n}" for n in range(10)), "gone"]]
    assert sorted(state.prefetched) == sorted(f"k{n}" for n in range(10))

    state.channels["dense"] = [ChannelHit("d0", 1, 0.9)]
    await depth.read(state, store, RecallConfig(), timeout_s=5)  # type: ignore[arg-type]

    assert not any(i in read for read in store.reads[1:] for i in state.prefetched)
    assert "k0" in state.memories
    assert "d0" in state.memories
