"""plan_eviction and the extractive summary, with literal inputs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hybrid_memory.models import Memory, MemoryKind
from hybrid_memory.service.lifecycle.eviction import (
    SUMMARY_MAX_TOKENS,
    Limits,
    Plan,
    extractive_summary,
    first_sentence,
    plan_eviction,
    summary_budget,
    truncate_to_tokens,
)

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def item(
    item_id: str, hour: float, tokens: int = 10, *, accessed: float | None = None, pinned: bool = False
) -> Memory:
    return Memory(
        id=item_id,
        kind=MemoryKind.MESSAGE,
        text=item_id,
        project="p",
        tokens=tokens,
        created_at=at(hour),
        last_accessed_at=None if accessed is None else at(accessed),
        pinned=pinned,
    )


def evicted(plan: Plan) -> list[tuple[str, str]]:
    return list(plan.evictions.items())


FIVE = [item("c", 2), item("a", 0), item("e", 4), item("b", 1), item("d", 3)]


def test_no_limits_evict_nothing() -> None:
    assert plan_eviction(FIVE, Limits()) == Plan(evictions={}, summarize=False)


def test_within_the_limits_nothing_is_evicted() -> None:
    plan = plan_eviction(FIVE, Limits(max_items=5, max_tokens=50, summary_tokens=20))

    assert plan == Plan(evictions={}, summarize=False)


def test_fifo_evicts_the_oldest_until_the_item_limit_holds() -> None:
    plan = plan_eviction(FIVE, Limits(max_items=3, policy="fifo"))

    assert evicted(plan) == [("a", "max_items"), ("b", "max_items")]
    assert plan.summarize is False


def test_lru_evicts_the_least_recently_used_first() -> None:
    items = [item("old-but-used", 0, accessed=10), item("new-unused", 5), item("mid", 2, accessed=3)]

    plan = plan_eviction(items, Limits(max_items=1, policy="lru"))

    assert evicted(plan) == [("mid", "max_items"), ("new-unused", "max_items")]


def test_fifo_ignores_last_access() -> None:
    items = [item("old-but-used", 0, accessed=10), item("new-unused", 5)]

    plan = plan_eviction(items, Limits(max_items=1, policy="fifo"))

    assert evicted(plan) == [("old-but-used", "max_items")]


def test_lru_ties_on_access_go_by_creation_then_id() -> None:
    items = [item("z", 1, accessed=9), item("y", 0, accessed=9), item("x", 1, accessed=9), item("w", 2)]

    plan = plan_eviction(items, Limits(max_items=1, policy="lru"))

    assert evicted(plan) == [("w", "max_items"), ("y", "max_items"), ("x", "max_items")]


def test_fifo_ties_on_creation_go_by_id() -> None:
    items = [item("b", 0), item("c", 0), item("a", 0)]

    plan = plan_eviction(items, Limits(max_items=1, policy="fifo"))

    assert evicted(plan) == [("a", "max_items"), ("b", "max_items")]


def test_token_limit_evicts_until_the_tokens_fit() -> None:
    items = [item("a", 0, 10), item("b", 1, 20), item("c", 2, 30)]

    plan = plan_eviction(items, Limits(max_tokens=35, policy="fifo"))

    assert evicted(plan) == [("a", "max_tokens"), ("b", "max_tokens")]


def test_the_item_limit_is_named_while_both_are_exceeded() -> None:
    items = [item("a", 0, 5), item("b", 1, 5), item("c", 2, 100)]

    plan = plan_eviction(items, Limits(max_items=2, max_tokens=100, policy="fifo"))

    assert evicted(plan) == [("a", "max_items"), ("b", "max_tokens")]


def test_pinned_items_are_never_evicted() -> None:
    items = [item("pinned-old", 0, pinned=True), item("b", 1), item("c", 2)]

    plan = plan_eviction(items, Limits(max_items=2, policy="fifo"))

    assert evicted(plan) == [("b", "max_items")]


def test_pinned_items_alone_over_the_limit_stay_and_get_no_summary() -> None:
    items = [item("p1", 0, pinned=True), item("p2", 1, pinned=True), item("u", 2)]

    plan = plan_eviction(items, Limits(max_items=1, policy="fifo", summary_tokens=20))

    assert evicted(plan) == [("u", "max_items")]
    assert plan.summarize is False


def test_a_summary_takes_one_item_of_room() -> None:
    plan = plan_eviction(FIVE, Limits(max_items=4, policy="fifo", summary_tokens=20))

    # Evicting one leaves 4, and the summary would make 5: a second one goes.
    assert evicted(plan) == [("a", "max_items"), ("b", "max_items")]
    assert plan.summarize is True


def test_a_summary_takes_its_tokens_of_room() -> None:
    items = [item("a", 0, 10), item("b", 1, 10), item("c", 2, 10)]

    plan = plan_eviction(items, Limits(max_tokens=25, policy="fifo", summary_tokens=5))

    # 20 tokens after one eviction, 25 with the summary: it fits.
    assert evicted(plan) == [("a", "max_tokens")]
    assert plan.summarize is True


def test_ttl_evicts_everything_older_than_the_cutoff_even_within_the_limits() -> None:
    plan = plan_eviction(FIVE, Limits(policy="ttl", ttl_cutoff=at(2)))

    assert evicted(plan) == [("a", "ttl"), ("b", "ttl")]


def test_ttl_spares_pinned_items() -> None:
    items = [item("p", 0, pinned=True), item("a", 1), item("b", 5)]

    plan = plan_eviction(items, Limits(policy="ttl", ttl_cutoff=at(2)))

    assert evicted(plan) == [("a", "ttl")]


def test_ttl_then_the_limits_evict_the_oldest_of_the_rest() -> None:
    plan = plan_eviction(FIVE, Limits(max_items=2, policy="ttl", ttl_cutoff=at(1)))

    assert evicted(plan) == [("a", "ttl"), ("b", "max_items"), ("c", "max_items")]


def test_ttl_without_a_cutoff_orders_like_fifo() -> None:
    plan = plan_eviction(FIVE, Limits(max_items=4, policy="ttl"))

    assert evicted(plan) == [("a", "max_items")]


def test_an_empty_project_plans_nothing() -> None:
    assert plan_eviction([], Limits(max_items=1, max_tokens=1, summary_tokens=1)) == Plan({}, False)


def test_eviction_is_a_value() -> None:
    assert plan_eviction([item("a", 0), item("b", 1)], Limits(max_items=1, policy="fifo")).evictions == {
        "a": "max_items"
    }


@pytest.mark.parametrize(
    ("max_tokens", "budget"),
    [(None, SUMMARY_MAX_TOKENS), (10_000, SUMMARY_MAX_TOKENS), (100, 25), (4, 1), (2, 1)],
)
def test_summary_budget_is_at_most_a_quarter_of_the_token_limit(max_tokens: int | None, budget: int) -> None:
    assert summary_budget(max_tokens) == budget


def test_first_sentence_is_flattened_and_cut() -> None:
    assert first_sentence("We chose  Postgres.\nIt is fast. Really.") == "We chose Postgres."
    assert first_sentence("no end in sight " * 20, max_chars=20) == "no end in sight no…"


def test_extractive_summary_lists_the_first_sentences_under_a_dated_head() -> None:
    text = extractive_summary(["user: Hi there. More.", "assistant: Hello!"], count=3, since=T0, until=at(48))

    assert text == (
        "Summary of 3 earlier memories (2024-05-01 to 2024-05-03): - user: Hi there. - assistant: Hello!"
    )


def test_truncate_to_tokens_cuts_after_the_last_kept_token() -> None:
    spans = [(0, 3), (4, 7), (8, 13)]

    assert truncate_to_tokens("one two three", spans, 2) == "one two"
    assert truncate_to_tokens("one two three", spans, 3) == "one two three"
    assert truncate_to_tokens("one two three", spans, 0) == ""
