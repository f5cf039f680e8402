from datetime import UTC, datetime, timedelta

import pytest

from hybrid_memory.service.recall.calibration import (
    Calibration,
    calibrated_fusion,
    match_strength,
    term_coverage,
)
from hybrid_memory.service.recall.ranking import (
    ChannelHit,
    Fused,
    Ranked,
    Weights,
    answers_first,
    by_order,
    dedupe_by,
    expand_adjacent,
    expand_linked,
    final_scores,
    history_last,
    in_order,
    own_words_first,
    pack_to_budget,
    recency,
    rrf,
    score_fusion,
    yield_questions,
)

NOW = datetime(2026, 1, 31, tzinfo=UTC)


def hits(*ids: str) -> list[ChannelHit]:
    return [ChannelHit(i, rank, 1.0 / rank) for rank, i in enumerate(ids, 1)]


def test_rrf_puts_agreement_first() -> None:
    fused = rrf({"dense": hits("a", "b", "c"), "keyword": hits("b", "d")}, k=60)
    assert [f.id for f in fused] == ["b", "a", "d", "c"]
    assert fused[0].ranks == {"dense": 2, "keyword": 1}


def test_rrf_normalises_first_everywhere_to_one() -> None:
    fused = rrf({"dense": hits("a"), "keyword": hits("a")}, k=60)
    assert fused[0].relevance == pytest.approx(1.0)


def test_rrf_ignores_empty_channels_in_the_ceiling() -> None:
    fused = rrf({"dense": hits("a"), "graph": []}, k=60)
    assert fused == [Fused(id="a", relevance=pytest.approx(1.0), ranks={"dense": 1}, scores={"dense": 1.0})]


def test_rrf_channel_weights_change_the_order() -> None:
    channels = {"dense": hits("a"), "keyword": hits("b")}
    assert [f.id for f in rrf(channels, weights={"keyword": 2.0})] == ["b", "a"]
    assert [f.id for f in rrf(channels, weights={"dense": 2.0})] == ["a", "b"]


def test_rrf_of_nothing_is_empty() -> None:
    assert rrf({}) == []
    assert rrf({"dense": []}) == []


def test_rrf_breaks_ties_by_best_rank_then_id() -> None:
    fused = rrf({"dense": hits("x", "y"), "keyword": hits("y", "x")})
    assert [f.id for f in fused] == ["x", "y"]


def test_recency_halves_every_half_life() -> None:
    assert recency(NOW, NOW, half_life_days=30) == 1.0
    assert recency(NOW - timedelta(days=30), NOW, half_life_days=30) == pytest.approx(0.5)
    assert recency(NOW - timedelta(days=60), NOW, half_life_days=30) == pytest.approx(0.25)
    assert recency(NOW + timedelta(days=5), NOW, half_life_days=30) == 1.0


def test_final_scores_prefer_recent_when_relevance_ties() -> None:
    fused = [Fused("old", 0.8, {"dense": 1}, {}), Fused("new", 0.8, {"keyword": 1}, {})]
    created = {"old": NOW - timedelta(days=90), "new": NOW - timedelta(days=1)}
    ranked = final_scores(
        fused, created_at=created.__getitem__, importance=lambda _: None, now=NOW, weights=Weights()
    )
    assert [r.id for r in ranked] == ["new", "old"]


def test_final_scores_weigh_importance() -> None:
    fused = [Fused("a", 0.5, {}, {}), Fused("b", 0.5, {}, {})]
    imp = {"a": 0.1, "b": 0.9}
    weights = Weights(relevance=0.5, recency=0.3, importance=0.2)
    ranked = final_scores(
        fused, created_at=lambda _: NOW, importance=imp.__getitem__, now=NOW, weights=weights
    )
    assert [r.id for r in ranked] == ["b", "a"]
    # 0.5*0.5 + 0.3*1.0 + 0.2*0.9, weights summing to 1
    assert ranked[0].score == pytest.approx(0.73)


def test_final_scores_default_importance_is_neutral() -> None:
    ranked = final_scores(
        [Fused("a", 1.0, {}, {})],
        created_at=lambda _: NOW,
        importance=lambda _: None,
        now=NOW,
        weights=Weights(),
    )
    assert ranked[0].importance == 0.5


def test_final_scores_reject_all_zero_weights() -> None:
    with pytest.raises(ValueError, match="at least one ranking weight"):
        final_scores(
            [],
            created_at=lambda _: NOW,
            importance=lambda _: None,
            now=NOW,
            weights=Weights(relevance=0, recency=0, importance=0),
        )


def ranked(*ids: str) -> list[Ranked]:
    return [Ranked(i, 1.0 - n / 10, 0.0, 0.0, 0.0, {}, {}) for n, i in enumerate(ids)]


def test_dedupe_keeps_the_best_of_each_group() -> None:
    group = {"a1": "a", "a2": "a", "b1": "b"}
    assert [r.id for r in dedupe_by(ranked("a2", "b1", "a1"), group.__getitem__)] == ["a2", "b1"]


def test_pack_to_budget_skips_what_does_not_fit_and_keeps_going() -> None:
    cost = {"a": 5, "b": 10, "c": 4}
    assert [r.id for r in pack_to_budget(ranked("a", "b", "c"), cost.__getitem__, 10)] == ["a", "c"]
    assert pack_to_budget(ranked("b"), cost.__getitem__, 9) == []


def scored(*pairs: tuple[str, float]) -> list[ChannelHit]:
    return [ChannelHit(i, rank, s) for rank, (i, s) in enumerate(pairs, 1)]


def test_score_fusion_keeps_a_confident_channel_ahead() -> None:
    # keyword is sure of "a"; dense barely prefers "b": the weighted sum keeps "a" first
    channels = {"keyword": scored(("a", 9.0), ("b", 1.0)), "dense": scored(("b", 0.61), ("a", 0.60))}
    fused = score_fusion(channels, {"keyword": 0.6, "dense": 0.4})
    assert [f.id for f in fused] == ["a", "b"]
    assert fused[0].relevance == pytest.approx(0.6)
    assert fused[1].relevance == pytest.approx(0.4)
    assert fused[0].ranks == {"keyword": 1, "dense": 2}


def test_score_fusion_divides_by_the_channels_that_answered() -> None:
    fused = score_fusion({"keyword": scored(("a", 3.0)), "graph": []}, {"keyword": 0.5, "graph": 0.5})
    assert fused[0].relevance == pytest.approx(1.0)


def test_score_fusion_skips_channels_without_weight() -> None:
    fused = score_fusion({"keyword": scored(("a", 1.0)), "debug": scored(("z", 5.0))}, {"keyword": 1.0})
    assert [f.id for f in fused] == ["a"]
    assert score_fusion({"debug": scored(("z", 5.0))}, {"keyword": 1.0}) == []


def test_expand_adjacent_lifts_the_neighbours_of_top_hits() -> None:
    fused = [
        Fused("q", 1.0, {"keyword": 1}, {}),
        Fused("x", 0.3, {"dense": 1}, {}),
        Fused("far", 0.2, {"dense": 2}, {}),
    ]
    out = expand_adjacent(fused, {"q": ["answer", "x"], "far": ["ignored"]}, top=1, share=0.6)
    assert [f.id for f in out] == ["q", "answer", "x", "far"]
    answer = out[1]
    assert answer.relevance == pytest.approx(0.6)
    assert answer.ranks == {"adjacent": 1}
    # "x" inherits 0.6 > its own 0.3 and keeps its own channel too
    assert out[2].ranks == {"dense": 1, "adjacent": 1}


def test_expand_adjacent_keeps_a_better_own_score() -> None:
    fused = [Fused("q", 1.0, {"keyword": 1}, {}), Fused("n", 0.9, {"dense": 1}, {})]
    out = expand_adjacent(fused, {"q": ["n"]}, top=1, share=0.6)
    assert out == fused


def fused(i: str, relevance: float, **scores: float) -> Fused:
    return Fused(id=i, relevance=relevance, ranks=dict.fromkeys(scores, 1), scores=scores)


def test_own_words_first_holds_a_reply_below_the_statement_whose_words_matched() -> None:
    statement = fused("m4", 0.6, keyword=5.0, dense=0.5)
    reply = fused("m5", 1.0, keyword=5.0, context=7.0, dense=0.7)
    out = own_words_first([reply, statement], {"m5": "m4"})
    assert [f.id for f in out] == ["m4", "m5"]
    assert out[1].relevance == pytest.approx(0.99 * 0.6)


def test_own_words_first_leaves_a_reply_whose_own_words_match_better() -> None:
    statement = fused("m4", 0.6, keyword=2.0)
    reply = fused("m5", 1.0, keyword=5.0)
    assert own_words_first([reply, statement], {"m5": "m4"}) == [reply, statement]


def test_own_words_first_needs_the_previous_turn_to_match_on_its_own_words() -> None:
    statement = fused("m4", 0.6, dense=0.5)
    reply = fused("m5", 1.0, dense=0.7)
    assert own_words_first([reply, statement], {"m5": "m4"}) == [reply, statement]


def test_calibration_saturates_unbounded_scores_and_scales_bounded_ones() -> None:
    assert Calibration(saturation=5.0)(5.0) == pytest.approx(0.5)
    assert Calibration(floor=0.3, ceiling=0.8)(0.55) == pytest.approx(0.5)
    assert Calibration(floor=0.3, ceiling=0.8)(0.9) == 1.0
    assert Calibration(floor=0.3, ceiling=0.8)(0.1) == 0.0


def test_calibrated_fusion_keeps_a_weak_first_hit_weak() -> None:
    weak = calibrated_fusion(
        {"keyword": [ChannelHit("a", 1, 1.0)]}, {"keyword": 1.0}, {"keyword": Calibration(saturation=9.0)}
    )
    strong = calibrated_fusion(
        {"keyword": [ChannelHit("a", 1, 9.0)]}, {"keyword": 1.0}, {"keyword": Calibration(saturation=9.0)}
    )
    assert (weak[0].relevance, strong[0].relevance) == (pytest.approx(0.1), pytest.approx(0.5))


def test_calibrated_fusion_divides_by_every_channel_that_ran_even_empty() -> None:
    out = calibrated_fusion(
        {"dense": [ChannelHit("a", 1, 1.0)], "graph": []}, {"dense": 1.0, "graph": 1.0}, {}
    )
    assert out[0].relevance == pytest.approx(0.5)


def test_yield_questions_lets_the_statement_pass_the_question() -> None:
    out = yield_questions([fused("q", 1.0, dense=0.6), fused("s", 0.9, dense=0.5)], {"q"}, factor=0.8)
    assert [f.id for f in out] == ["s", "q"]


def test_history_last_puts_a_closed_item_after_its_successor_and_keeps_scores() -> None:
    def item(i: str, score: float) -> Ranked:
        return Ranked(i, score, score, 0.0, 0.5, {"graph": 1}, {})

    out = history_last([item("old", 0.87), item("new", 0.8), item("other", 0.5)], {"old"})
    assert [(r.id, r.score) for r in out] == [("new", 0.8), ("other", 0.5), ("old", 0.87)]


def test_answers_first_puts_a_found_reply_in_its_question_s_place() -> None:
    question = fused("q", 0.9, keyword=6.0)
    answer = fused("a", 0.5, context=4.0)
    out = answers_first([question, answer, fused("x", 0.7, dense=0.6)], {"a": "q"})
    assert [(f.id, round(f.relevance, 3)) for f in out] == [("a", 0.9), ("q", 0.891), ("x", 0.7)]


def test_answers_first_leaves_a_question_whose_reply_was_not_found_or_is_ahead() -> None:
    question, answer = fused("q", 0.9, keyword=6.0), fused("a", 0.95, context=4.0)
    assert answers_first([question], {"a": "q"}) == [question]
    assert answers_first([answer, question], {"a": "q"}) == [answer, question]


def test_expand_linked_adds_link_strength_to_a_note_s_own_relevance_below_its_seed() -> None:
    seed, hub, match = fused("s", 0.9, keyword=5.0), fused("hub", 0.1, dense=0.3), fused("m", 0.2, dense=0.5)
    out = expand_linked([seed, match, hub], {"s": [("hub", 1.0), ("m", 1.0), ("new", 0.5)]}, share=0.3)
    assert [(f.id, round(f.relevance, 3)) for f in out] == [
        ("s", 0.9),
        ("m", 0.47),
        ("hub", 0.37),
        ("new", 0.135),
    ]
    assert out[1].ranks == {"dense": 1, "neighbour": 1}


def test_expand_linked_caps_the_gain_just_below_the_seed_but_keeps_a_better_own_score() -> None:
    seed, close, better = (
        fused("s", 0.5, keyword=2.0),
        fused("c", 0.45, dense=0.4),
        fused("b", 0.8, dense=0.7),
    )
    out = expand_linked([better, seed, close], {"s": [("c", 1.0), ("b", 1.0)]}, share=0.3)
    assert [(f.id, round(f.relevance, 3)) for f in out] == [("b", 0.8), ("s", 0.5), ("c", 0.495)]


def test_match_is_the_mean_of_the_query_words_held_and_the_calibrated_cosine() -> None:
    cosine = Calibration(floor=0.3, ceiling=0.8)
    assert term_coverage({1, 2, 3, 4}, [2, 4, 9]) == 0.5
    assert term_coverage(set(), [1]) == 0.0
    assert match_strength(0.5, 0.55, cosine) == pytest.approx(0.5)
    assert match_strength(1.0, None, cosine) == 0.5
    assert match_strength(0.75, None, None) == 0.75


def test_fusion_stages_keep_the_order_of_relevance_then_best_rank_then_id() -> None:
    tied = [
        Fused("b", 0.5, {"dense": 1}, {}),
        Fused("a", 0.5, {"dense": 2}, {}),
        Fused("c", 0.5, {"dense": 1}, {}),
    ]
    fused_list = rrf({"dense": hits("x")}) + tied
    out = expand_adjacent(fused_list, {"x": ["z"]}, top=1, share=0.5)
    assert [f.id for f in out] == ["x", "b", "c", "z", "a"]
    assert [f.id for f in own_words_first(out, {})] == ["x", "b", "c", "z", "a"]
    assert [f.order for f in out][:2] == [(-1.0, 1, "x"), (-0.5, 1, "b")]


@pytest.mark.parametrize(
    "moved", [{"c07"}, {"c00", "c19"}, {"c03", "c04", "c05"}, {f"c{n:02}" for n in range(12)}]
)
def test_in_order_puts_the_moved_candidates_where_a_whole_sort_would(moved: set[str]) -> None:
    ordered = sorted(
        (Fused(f"c{n:02}", 1.0 - n / 40, {"dense": n % 3 + 1}, {}) for n in range(20)), key=by_order
    )
    changed = [
        Fused(f.id, 0.9 - f.relevance / 2, {"keyword": 2}, {}) if f.id in moved else f for f in ordered
    ]
    assert [f.id for f in in_order(list(changed), moved)] == [f.id for f in sorted(changed, key=by_order)]
    assert in_order(ordered, set()) is ordered
