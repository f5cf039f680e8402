"""LoCoMo loading, evidence repair and the retrieval metrics, with literal inputs."""

from __future__ import annotations

import math
from datetime import UTC, datetime
from typing import Any

import pytest

from hybrid_memory.evaluation.baselines import rrf_fuse
from hybrid_memory.evaluation.locomo import (
    DatasetError,
    Question,
    RepairLog,
    Turn,
    hit_at_k,
    latency_summary,
    ndcg_at_k,
    parse_locomo,
    parse_session_date,
    percentile,
    recall_at_k,
    repair_evidence,
    summarise,
)

KNOWN = {"D1:1", "D1:2", "D1:3", "D8:6", "D9:17", "D11:26", "D30:5"}


def sample(qa: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {
            "sample_id": "conv-1",
            "conversation": {
                "speaker_a": "Ann",
                "speaker_b": "Bob",
                "session_1_date_time": "1:56 pm on 8 May, 2023",
                "session_1": [
                    {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a dog."},
                    {
                        "speaker": "Bob",
                        "dia_id": "D1:2",
                        "text": "Look at this!",
                        "blip_caption": "a photo of a sunset",
                    },
                ],
                "session_2_date_time": "9:05 am on 1 June, 2023",
                "session_2": [{"speaker": "Ann", "dia_id": "D2:1", "text": "The dog is called Rex."}],
                "session_3_date_time": "10:00 am on 2 June, 2023",
            },
            "qa": qa,
        }
    ]


# --- evidence repair ----------------------------------------------------------------


def test_repair_splits_several_ids_in_one_string() -> None:
    log = RepairLog()
    assert repair_evidence(["D8:6; D9:17"], KNOWN, log, "q") == ("D8:6", "D9:17")
    assert repair_evidence(["D1:1 D1:2 D1:3"], KNOWN, log, "q") == ("D1:1", "D1:2", "D1:3")
    assert log.split_entries == 2
    assert log.normalised_ids == 0


def test_repair_normalises_a_stray_colon_and_a_zero_padded_turn() -> None:
    log = RepairLog()
    assert repair_evidence(["D:11:26", "D30:05"], KNOWN, log, "q") == ("D11:26", "D30:5")
    assert log.normalised_ids == 2
    assert log.examples == ["q: 'D:11:26' -> 'D11:26'", "q: 'D30:05' -> 'D30:5'"]


def test_repair_drops_what_names_no_existing_turn() -> None:
    log = RepairLog()
    assert repair_evidence(["D1:18", "D", "D1:2", "D4:36"], KNOWN, log, "q") == ("D1:2",)
    assert log.dropped_unparseable == 1
    assert log.dropped_unknown == 2


def test_repair_keeps_order_and_removes_duplicates() -> None:
    log = RepairLog()
    assert repair_evidence(["D1:3", "D1:1", "D1:3"], KNOWN, log, "q") == ("D1:3", "D1:1")
    assert log.duplicates_removed == 1


def test_parse_drops_questions_left_without_evidence_and_counts_them() -> None:
    dataset = parse_locomo(
        sample(
            [
                {"question": "What pet?", "answer": "a dog", "evidence": ["D1:1"], "category": 4},
                {"question": "Why?", "answer": "?", "evidence": [], "category": 3},
                {"question": "When?", "answer": "?", "evidence": ["D7:7"], "category": 2},
            ]
        )
    )
    assert [(q.key, q.evidence) for q in dataset.questions] == [("conv-1#0", ("D1:1",))]
    assert dataset.repair.questions_dropped == 2
    assert dataset.repair.dropped_unknown == 1


# --- dataset shape --------------------------------------------------------------------


def test_parse_keeps_sessions_with_turns_and_their_dates() -> None:
    conv = parse_locomo(sample([])).conversations[0]
    assert [(s.number, s.date) for s in conv.sessions] == [
        (1, datetime(2023, 5, 8, 13, 56, tzinfo=UTC)),
        (2, datetime(2023, 6, 1, 9, 5, tzinfo=UTC)),
    ]
    assert [t.content for t in conv.turns] == [
        "Ann: I adopted a dog.",
        "Bob: Look at this! [image: a photo of a sunset]",
        "Ann: The dog is called Rex.",
    ]


def test_session_dates_are_utc_and_twelve_hour_clock_aware() -> None:
    assert parse_session_date("12:09 am on 13 January, 2023") == datetime(2023, 1, 13, 0, 9, tzinfo=UTC)
    assert parse_session_date("12:30 pm on 2 February, 2022") == datetime(2022, 2, 2, 12, 30, tzinfo=UTC)


def test_a_malformed_date_is_a_dataset_error() -> None:
    with pytest.raises(DatasetError, match="session date 'yesterday'"):
        parse_session_date("yesterday")


def test_a_file_that_is_not_a_list_is_a_dataset_error() -> None:
    with pytest.raises(DatasetError, match="expected a JSON list"):
        parse_locomo({"qa": []})


def test_turn_content_without_caption() -> None:
    assert Turn(dia_id="D1:1", speaker="Ann", text="Hi").content == "Ann: Hi"


# --- metrics ----------------------------------------------------------------------------


def test_recall_counts_the_share_of_evidence_in_the_top_k() -> None:
    ranked = ["a", "x", "b", "y", "c"]
    assert recall_at_k(ranked, {"a", "b", "c", "d"}, 1) == 0.25
    assert recall_at_k(ranked, {"a", "b", "c", "d"}, 3) == 0.5
    assert recall_at_k(ranked, {"a", "b", "c", "d"}, 10) == 0.75
    assert recall_at_k([], {"a"}, 10) == 0.0


def test_hit_is_one_when_any_evidence_is_in_the_top_k() -> None:
    assert hit_at_k(["x", "y", "a"], {"a", "b"}, 2) == 0.0
    assert hit_at_k(["x", "y", "a"], {"a", "b"}, 3) == 1.0


def test_ndcg_is_one_for_the_ideal_order_and_discounts_later_ranks() -> None:
    assert ndcg_at_k(["a", "b", "x"], {"a", "b"}, 10) == 1.0
    assert ndcg_at_k(["x", "a"], {"a"}, 10) == pytest.approx(1 / math.log2(3))
    ideal = 1 + 1 / math.log2(3)
    assert ndcg_at_k(["x", "a", "y", "b"], {"a", "b"}, 10) == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(5)) / ideal
    )
    assert ndcg_at_k(["x", "a"], {"a"}, 1) == 0.0


def test_ndcg_counts_a_repeated_id_once() -> None:
    assert ndcg_at_k(["a", "a"], {"a", "b"}, 10) == pytest.approx(1 / (1 + 1 / math.log2(3)))


def test_metrics_refuse_empty_evidence() -> None:
    with pytest.raises(ValueError, match="without relevant ids"):
        recall_at_k(["a"], set(), 10)


def test_summarise_averages_per_category_and_keeps_adversarial_out_of_overall() -> None:
    def q(index: int, category: int, evidence: tuple[str, ...]) -> Question:
        return Question("c", index, f"q{index}", category, evidence)

    questions = [q(0, 1, ("a", "b")), q(1, 4, ("c",)), q(2, 4, ("d",)), q(3, 5, ("e",))]
    rankings = {"c#0": ["a"], "c#1": ["c"], "c#2": ["x"], "c#3": ["e"]}
    summary = summarise(questions, rankings)
    assert summary["1"]["R@10"] == 0.5
    assert summary["4"]["R@10"] == 0.5
    assert summary["4"]["n"] == 2
    assert summary["overall"]["R@10"] == pytest.approx((0.5 + 1 + 0) / 3)
    assert summary["overall"]["hit@1"] == pytest.approx(2 / 3)
    assert summary["overall"]["n"] == 3
    assert (summary["5"]["R@10"], summary["5"]["n"]) == (1.0, 1)
    assert summary["2"] == {"n": 0}


def test_a_question_without_a_ranking_retrieved_nothing() -> None:
    summary = summarise([Question("c", 0, "q", 2, ("a",))], {})
    assert summary["overall"]["R@20"] == 0.0


# --- latency and fusion -----------------------------------------------------------------


def test_percentile_interpolates_between_closest_ranks() -> None:
    values = [4.0, 1.0, 3.0, 2.0]
    assert percentile(values, 50) == 2.5
    assert percentile(values, 0) == 1.0
    assert percentile(values, 100) == 4.0
    assert percentile(list(map(float, range(1, 101))), 95) == pytest.approx(95.05)


def test_latency_summary_reports_milliseconds() -> None:
    assert latency_summary([0.010, 0.020, 0.030]) == {
        "n": 3,
        "p50_ms": pytest.approx(20.0),
        "p95_ms": pytest.approx(29.0),
        "mean_ms": pytest.approx(20.0),
    }
    assert latency_summary([]) == {"n": 0}


def test_rrf_rewards_agreement_and_breaks_ties_by_best_rank() -> None:
    assert rrf_fuse([["a", "b", "c"], ["b", "c", "a"]], k=60) == ["b", "a", "c"]
    assert rrf_fuse([["a", "b"], ["b", "a"]], k=60) == ["a", "b"]  # tie: best single rank, then id
