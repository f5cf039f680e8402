"""``hybrid-memory eval locomo`` end to end on a tiny literal dataset: CLI -> stdio server -> report.

Asserts the report's structure and the evidence bookkeeping only; retrieval quality
is the benchmark's business (``bench/locomo.py``), never a test's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import model_dir

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

TINY_LOCOMO: list[dict[str, Any]] = [
    {
        "sample_id": "conv-tiny",
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a puppy from the shelter yesterday!"},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Congrats! What breed is it?"},
                {
                    "speaker": "Ann",
                    "dia_id": "D1:3",
                    "text": "A beagle. Here he is.",
                    "blip_caption": "a photo of a small dog on a sofa",
                },
            ],
            "session_2_date_time": "9:05 am on 1 June, 2023",
            "session_2": [
                {"speaker": "Bob", "dia_id": "D2:1", "text": "I started pottery classes on Tuesday."},
                {"speaker": "Ann", "dia_id": "D2:2", "text": "Nice, I'd love to see your first bowl."},
                {"speaker": "Bob", "dia_id": "D2:3", "text": "It's lopsided, but I'm proud of it."},
            ],
        },
        "qa": [
            {"question": "What breed is Ann's dog?", "answer": "beagle", "evidence": ["D1:3"], "category": 4},
            {
                "question": "When did Bob start pottery classes?",
                "answer": "the Tuesday before 1 June 2023",
                "evidence": ["D2:01; D9:9"],
                "category": 2,
            },
            {
                "question": "What breed is Bob's cat?",
                "adversarial_answer": "beagle",
                "evidence": ["D1:3"],
                "category": 5,
            },
        ],
    }
]


def test_eval_locomo_prints_tables_and_writes_the_report(tmp_path: Path) -> None:
    dataset = tmp_path / "tiny.json"
    dataset.write_text(json.dumps(TINY_LOCOMO), encoding="utf-8")
    out = tmp_path / "results.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HYBRID_MEMORY_", "QDRANT_", "NEO4J_"))}
    env["HYBRID_MEMORY_EMBEDDING_MODEL_PATH"] = str(model_dir())

    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "hybrid_memory",
            "eval",
            "locomo",
            str(dataset),
            "--out",
            str(out),
            "--limit",
            "5",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stderr
    assert "R@10" in done.stdout
    assert "nDCG@10" in done.stdout
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["counts"] == {
        "conversations": 1,
        "sessions": 2,
        "turns": 6,
        "questions": 3,
        "scored_questions": 2,
        "by_category": {"1": 0, "2": 1, "3": 0, "4": 1, "5": 1},
    }
    repair = report["evidence_repair"]
    assert (repair["split_entries"], repair["normalised_ids"], repair["dropped_unknown"]) == (1, 1, 1)
    assert list(report["retrievers"]) == [
        "hybrid-memory",
        "hybrid-memory, carried turns as turns",
        "bm25",
        "dense",
        "rrf(bm25,dense)",
    ]
    server = report["retrievers"]["hybrid-memory"]
    assert server["details"]["messages_without_message_id"] == 0
    assert server["details"]["ingest"]["stored"] == 6
    assert server["latency"]["n"] == 3
    assert set(server["metrics"]) == {"1", "2", "3", "4", "5", "overall"}
    assert server["metrics"]["overall"]["n"] == 2
    assert {"R@10", "hit@10", "nDCG@10"} <= set(server["metrics"]["overall"])
    assert [q["evidence"] for q in report["questions"]] == [["D1:3"], ["D2:1"], ["D1:3"]]
    rankings = report["questions"][0]["rankings"]["hybrid-memory"]
    assert 0 < len(rankings) <= 5
    assert set(rankings) <= {"D1:1", "D1:2", "D1:3", "D2:1", "D2:2", "D2:3"}
    shown = report["questions"][0]["rankings"]["hybrid-memory, carried turns as turns"]
    assert shown[0] == rankings[0]
    assert set(rankings[:2]) <= set(shown)


def _conversation(
    sample_id: str, speakers: tuple[str, str], texts: list[str], question: str
) -> dict[str, Any]:
    turns = [
        {"speaker": speakers[i % 2], "dia_id": f"D1:{i + 1}", "text": text} for i, text in enumerate(texts)
    ]
    return {
        "sample_id": sample_id,
        "conversation": {
            "speaker_a": speakers[0],
            "speaker_b": speakers[1],
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": turns,
        },
        "qa": [{"question": question, "answer": "-", "evidence": ["D1:1"], "category": 4}],
    }


# The first conversation says "guitar" in every turn; the second says it once and "market" three
# times. In a store of its own, "guitar" is the second's rarer word; beside the first, "market" is.
TWO_PROJECTS: list[dict[str, Any]] = [
    _conversation(
        "conv-guitars",
        ("Cat", "Dan"),
        [f"My guitar lesson number {n} went fine, the guitar teacher was patient." for n in range(1, 25)],
        "How many guitar lessons did Cat take?",
    ),
    _conversation(
        "conv-market",
        ("Ann", "Bob"),
        [
            "I played guitar all evening.",
            "Sounds lovely.",
            "The market was busy today.",
            "Oh really.",
            "The market sells fresh fish.",
            "Nice.",
            "I walked past the market again.",
            "Good.",
        ],
        "guitar market",
    ),
]


def _rankings(tmp_path: Path, name: str, *flags: str) -> dict[str, list[str]]:
    dataset = tmp_path / "two.json"
    dataset.write_text(json.dumps(TWO_PROJECTS), encoding="utf-8")
    out = tmp_path / f"{name}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HYBRID_MEMORY_", "QDRANT_", "NEO4J_"))}
    env["HYBRID_MEMORY_EMBEDDING_MODEL_PATH"] = str(model_dir())
    command = [sys.executable, "-m", "hybrid_memory", "eval", "locomo", str(dataset), "--out", str(out)]
    done = subprocess.run(
        [*command, "--no-baselines", *flags], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(out.read_text(encoding="utf-8"))
    return {q["key"]: q["rankings"]["hybrid-memory"] for q in report["questions"]}


def test_separate_stores_rank_a_conversation_as_if_it_were_the_only_project(tmp_path: Path) -> None:
    alone = _rankings(tmp_path, "alone", "--half", "held-out")["conv-market#0"]
    shared = _rankings(tmp_path, "shared")["conv-market#0"]
    separate = _rankings(tmp_path, "separate", "--separate-stores")["conv-market#0"]

    assert alone[0] == "D1:1"  # "guitar" is its rarer word: the turn that says it leads
    assert shared[0] != "D1:1"  # the keyword IDF is the whole store's, the other project's turns too
    assert separate == alone
