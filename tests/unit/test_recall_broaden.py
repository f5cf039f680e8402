"""Recall's broadening steps with literal inputs: thread diversity and keyword feedback."""

from __future__ import annotations

from datetime import UTC, datetime

from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.errors import BackendUnavailableError
from hybrid_memory.models import Memory, MemoryFilter, MemoryKind, Scope, Searches, SparseVector, VectorHit
from hybrid_memory.ranking import ChannelHit, Ranked
from hybrid_memory.service.recall import RecallConfig, RecallOptions, feedback, spread
from hybrid_memory.service.recall.state import RecallState, plan

NOW = datetime(2024, 5, 1, tzinfo=UTC)
SCOPE = Scope(project="p")


def ranked(*ids: str) -> list[Ranked]:
    """Items best first, scores 1.0, 0.9, 0.8, ..."""
    return [Ranked(i, 1.0 - n / 10, 1.0 - n / 10, 0.0, 0.5, {}, {}) for n, i in enumerate(ids)]


def thread(item_id: str) -> str:
    return item_id[0]


def test_spread_lets_the_best_of_another_thread_pass_a_threads_second_and_third() -> None:
    out = spread.by_thread(ranked("a1", "a2", "a3", "b1", "c1"), thread, share=0.3, window=5)

    assert [r.id for r in out] == ["a1", "b1", "a2", "c1", "a3"]
    assert [round(r.score, 3) for r in out] == [1.0, 0.7, 0.63, 0.6, 0.392]


def test_spread_keeps_each_threads_own_order_and_leaves_the_tail_alone() -> None:
    out = spread.by_thread(ranked("a1", "a2", "b1", "a3", "b2"), thread, share=0.9, window=3)

    assert [r.id for r in out] == ["a1", "b1", "a2", "a3", "b2"]
    assert [round(r.score, 3) for r in out[3:]] == [0.7, 0.6]


def test_spread_zero_changes_nothing() -> None:
    items = ranked("a1", "a2", "b1")
    assert spread.by_thread(items, thread, share=0.0, window=3) == items


def test_spread_counts_a_memory_without_thread_as_its_own() -> None:
    state = plan(SCOPE, "q", RecallOptions(limit=3), NOW, RecallConfig(spread=0.5))
    for i, thread_id in (("m1", "t"), ("m2", "t"), ("n1", None), ("n2", None)):
        state.memories[i] = Memory(
            id=i, kind=MemoryKind.NOTE, text=i, project="p", created_at=NOW, thread_id=thread_id
        )
    state.ranked = ranked("m1", "m2", "n1", "n2")

    spread.apply(state, RecallConfig(spread=0.5))

    assert [r.id for r in state.ranked] == ["m1", "n1", "n2", "m2"]


def test_spread_turns_lets_a_match_from_elsewhere_pass_the_turn_beside_a_result() -> None:
    beside = {"a1": ["a2"], "a2": ["a1", "a3"], "a3": ["a2"]}
    items = ranked("a1", "a2", "b1", "a3")

    out = spread.by_exchange(items, lambda i: beside.get(i, []), share=0.25, window=4)

    # a3 is not beside a1 or b1, so it keeps its 0.7 and passes a2 too.
    assert [r.id for r in out] == ["a1", "b1", "a3", "a2"]
    assert [round(r.score, 3) for r in out] == [1.0, 0.8, 0.7, 0.675]


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

    await feedback.apply(state, config, vectors=store, sparse=sparse)  # type: ignore[arg-type]

    (asked,) = store.asked
    assert asked.dense is None
    assert asked.keyword == asked.context
    assert asked.keyword is not None
    query = set(sparse.encode_query("what outdoor activities").indices)
    added = {i: v for i, v in zip(asked.keyword.indices, asked.keyword.values, strict=True) if i not in query}
    assert (
        set(added) == set(sparse.encode_document("outdoor hiking and camping every summer").indices) - query
    )
    assert set(added.values()) == {0.3}
    assert [(h.id, h.rank) for h in state.channels["keyword"]] == [("c", 1)]
    assert [(h.id, h.rank) for h in state.channels["context"]] == [("c", 1)]
    assert [(h.id, h.rank) for h in state.channels["dense"]] == [("a", 1)]
    assert "c" in state.memories


async def test_feedback_that_fails_keeps_the_first_rounds_rankings_and_says_so() -> None:
    config = RecallConfig(feedback=0.3)
    state = first_round(config)

    await feedback.apply(state, config, vectors=FeedbackStore(fail=True), sparse=Bm25Encoder())  # type: ignore[arg-type]

    assert [h.id for h in state.channels["keyword"]] == ["a"]
    assert state.skipped == {"feedback": "The memory store is busy; try again shortly."}


async def test_feedback_off_makes_no_second_search() -> None:
    store = FeedbackStore()
    state = first_round(RecallConfig())

    await feedback.apply(state, RecallConfig(), vectors=store, sparse=Bm25Encoder())  # type: ignore[arg-type]

    assert store.asked == []
