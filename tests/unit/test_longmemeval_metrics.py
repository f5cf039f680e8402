"""LongMemEval loading and its turn- and session-level metrics, with literal inputs."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from hybrid_memory.evaluation.baselines import bm25_rankings
from hybrid_memory.evaluation.lme_runner import ranked_turns, session_messages
from hybrid_memory.evaluation.locomo import DatasetError
from hybrid_memory.evaluation.longmemeval import parse_longmemeval, question_scores, session_of, summarise


def item(qid: str = "q1", question_type: str = "single-session-user") -> dict[str, Any]:
    return {
        "question_id": qid,
        "question_type": question_type,
        "question": "Which city did I move to?",
        "answer": "Lisbon",
        "question_date": "2023/05/30 (Tue) 10:00",
        "haystack_session_ids": ["s1", "s2"],
        "haystack_dates": ["2023/05/01 (Mon) 09:15", "2023/05/20 (Sat) 18:40"],
        "haystack_sessions": [
            [
                {"role": "user", "content": "Any tips for packing books?"},
                {"role": "assistant", "content": "Use small boxes for books."},
            ],
            [
                {"role": "user", "content": "I moved to Lisbon last week.", "has_answer": True},
                {"role": "assistant", "content": "Welcome to Lisbon!"},
            ],
        ],
        "answer_session_ids": ["s2"],
    }


def test_items_name_turns_by_session_and_index_and_date_every_message() -> None:
    (parsed,) = parse_longmemeval([item()])
    assert [t.id for t in parsed.turns] == ["s1#0", "s1#1", "s2#0", "s2#1"]
    assert parsed.evidence == ("s2#0",)
    assert session_of("s2#0") == "s2"
    messages = session_messages(parsed.sessions[1])
    assert messages[0] == {
        "role": "user",
        "content": "I moved to Lisbon last week.",
        "id": "s2#0",
        "created_at": datetime(2023, 5, 20, 18, 40, tzinfo=UTC).isoformat(),
    }


def test_an_item_without_evidence_turns_is_left_out() -> None:
    bare = item("q2")
    bare["haystack_sessions"][1][0].pop("has_answer")
    assert [i.id for i in parse_longmemeval([item(), bare])] == ["q1"]


def test_a_bad_date_names_the_item_and_the_expected_form() -> None:
    broken = item()
    broken["haystack_dates"][0] = "May 1st"
    with pytest.raises(DatasetError, match="item 0: date 'May 1st' is not like '2023/03/27 \\(Mon\\) 00:49'"):
        parse_longmemeval([broken])


def test_scores_count_each_turn_and_sessions_by_first_rank() -> None:
    (parsed,) = parse_longmemeval([item()])
    scores = question_scores(["s1#1", "s2#1", "s2#0"], parsed)
    assert scores["T-R@5"] == 1.0
    assert scores["MRR"] == pytest.approx(1 / 3)
    assert scores["hit@1"] == 0.0
    assert scores["nDCG@10"] == pytest.approx(0.5)
    assert scores["S-any@5"] == 1.0
    assert scores["S-all@10"] == 1.0
    missed = question_scores(["s1#0", "s1#1"], parsed)
    assert missed["MRR"] == 0.0
    assert missed["S-any@5"] == 0.0


def test_summary_is_per_type_and_overall() -> None:
    items = parse_longmemeval([item("a"), item("b", "multi-session")])
    summary = summarise(items, {"a": ["s2#0"], "b": []})
    assert summary["single-session-user"]["MRR"] == 1.0
    assert summary["multi-session"]["MRR"] == 0.0
    assert summary["overall"]["MRR"] == 0.5
    assert summary["overall"]["n"] == 2


def test_hits_count_by_their_own_turn_not_the_turns_they_carry() -> None:
    hits = [
        {"kind": "message", "id": "m1", "message_id": "s2#1", "context_before": {"message_id": "s2#0"}},
        {"kind": "note", "id": "n1"},
    ]
    assert ranked_turns(hits) == ["s2#1", "<note:n1>"]


def test_bm25_baseline_ranks_each_corpus_for_its_own_query() -> None:
    corpora = {"a": [("x", "I moved to Lisbon"), ("y", "books in boxes")], "b": [("z", "Lisbon")]}
    assert bm25_rankings(corpora, {"a": "Lisbon move", "b": "boxes"}, 10) == {"a": ["x"], "b": []}
