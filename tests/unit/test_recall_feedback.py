"""Keyword feedback in recall: the borrowed terms and the second search, with a fake store."""

from __future__ import annotations

from datetime import UTC, datetime

from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.errors import BackendUnavailableError
from hybrid_memory.models import Memory, MemoryFilter, MemoryKind, Scope, Searches, SparseVector, VectorHit
from hybrid_memory.service.recall import RecallConfig, RecallOptions, feedback, recall_config
from hybrid_memory.service.recall.ranking import ChannelHit
from hybrid_memory.service.recall.state import RecallState, plan
from hybrid_memory.settings import RankingSettings

NOW = datetime(2024, 5, 1, tzinfo=UTC)
SCOPE = Scope(project="p")


def test_borrowed_terms_weigh_the_share_of_docs_holding_them_and_leave_query_terms_alone() -> None:
    query = SparseVector(indices=[1, 2], values=[1.0, 1.0])
    docs = [
        SparseVector(indices=[1, 5, 7], values=[0.5, 0.4, 0.9]),
        SparseVector(indices=[5, 9], values=[0.3, 0.2]),
    ]

    out = feedback.borrowed(query, docs, weight=0.4, terms=2)

    # 5 is in both docs; 7 outweighs 9 among the terms in one; 1 is the query's own.
    assert dict(zip(out.indices, out.values, strict=True)) == {1: 1.0, 2: 1.0, 5: 0.4, 7: 0.2}


def turn(name: str, text: str) -> Memory:
    return Memory(id=name, kind=MemoryKind.MESSAGE, text=text, project="p", created_at=NOW)


class FeedbackStore:
    """Answers the second keyword round from a fixed list, keeping the vectors it was asked with."""

    def __init__(self, fail: bool = False) -> None:
        self.asked: list[Searches] = []
        self.fail = fail

    async def search_many(
        self, flt: MemoryFilter, limit: int, searches: Searches
    ) -> dict[str, list[VectorHit]]:
        self.asked.append(searches)
        if self.fail:
            raise BackendUnavailableError("The memory store is busy; try again shortly.")
        hit = [VectorHit(memory=turn("c", "we went camping by the lake"), score=4.0)]
        return {"keyword": hit, "context": hit}


def first_round(config: RecallConfig) -> RecallState:
    state = plan(SCOPE, "what outdoor activities", RecallOptions(), NOW, config)
    state.memories["a"] = turn("a", "outdoor hiking and camping every summer")
    state.channels["keyword"] = [ChannelHit("a", 1, 5.0)]
    state.channels["context"] = []
    state.channels["dense"] = [ChannelHit("a", 1, 0.7)]
    return state


async def test_feedback_searches_again_with_the_best_hits_words_and_replaces_the_keyword_rankings() -> None:
    config = RecallConfig(feedback=0.3)
    state = first_round(config)
    store = FeedbackStore()
    sparse = Bm25Encoder()

    query = sparse.encode_query(state.query)
    await feedback.apply(state, config, vectors=store, encoder=sparse, query=query)  # type: ignore[arg-type]

    (asked,) = store.asked
    assert asked.dense is None
    assert asked.keyword == asked.context
    assert asked.keyword is not None
    own = set(sparse.encode_query("what outdoor activities").indices)
    added = {i: v for i, v in zip(asked.keyword.indices, asked.keyword.values, strict=True) if i not in own}
    assert set(added) == set(sparse.encode_document("outdoor hiking and camping every summer").indices) - own
    assert set(added.values()) == {0.3}
    assert [(h.id, h.rank) for h in state.channels["keyword"]] == [("c", 1)]
    assert [(h.id, h.rank) for h in state.channels["context"]] == [("c", 1)]
    assert [(h.id, h.rank) for h in state.channels["dense"]] == [("a", 1)]
    assert "c" in state.memories


async def test_feedback_that_fails_keeps_the_first_rounds_rankings_and_says_so() -> None:
    config = RecallConfig(feedback=0.3)
    state = first_round(config)

    encoder = Bm25Encoder()
    query = encoder.encode_query(state.query)
    await feedback.apply(state, config, vectors=FeedbackStore(fail=True), encoder=encoder, query=query)  # type: ignore[arg-type]

    assert [h.id for h in state.channels["keyword"]] == ["a"]
    assert state.skipped == {"feedback": "The memory store is busy; try again shortly."}


async def test_feedback_off_makes_no_second_search() -> None:
    store = FeedbackStore()
    off = RecallConfig(feedback=0.0)
    state = first_round(off)

    encoder = Bm25Encoder()
    await feedback.apply(state, off, vectors=store, encoder=encoder, query=encoder.encode_query(state.query))  # type: ignore[arg-type]

    assert store.asked == []


def test_seeds_are_the_first_rounds_best_by_fusion_as_many_as_configured() -> None:
    config = RecallConfig(feedback=0.1, feedback_docs=2)
    state = plan(SCOPE, "q", RecallOptions(), NOW, config)
    for name in "abc":
        state.memories[name] = turn(name, f"text {name}")
    state.channels["keyword"] = [ChannelHit("c", 1, 9.0), ChannelHit("b", 2, 5.0), ChannelHit("a", 3, 1.0)]
    state.channels["dense"] = [ChannelHit("b", 1, 0.8), ChannelHit("a", 2, 0.5), ChannelHit("c", 3, 0.4)]

    assert feedback.seeds(state, config) == ["text b", "text c"]


def test_the_feedback_setting_turns_feedback_on_over_the_preset() -> None:
    config = recall_config(RankingSettings(feedback=0.1), timeout_s=1.0)

    assert (config.feedback, config.feedback_docs) == (0.1, 5)
    assert recall_config(RankingSettings(), timeout_s=1.0).feedback == 0.0
