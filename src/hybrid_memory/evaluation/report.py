"""The LoCoMo report: one JSON-ready dict, printed as plain-text tables and written as JSON."""

from __future__ import annotations

import json
import platform
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hybrid_memory import __version__
from hybrid_memory.evaluation.locomo import (
    ADVERSARIAL,
    CATEGORY_NAMES,
    SCORED_CATEGORIES,
    Dataset,
    RetrieverRun,
    latency_summary,
    summarise,
)

TABLE_METRICS = ("R@10", "hit@10", "nDCG@10", "R@5", "R@20")


def build_report(dataset: Dataset, runs: Sequence[RetrieverRun], *, path: Path, limit: int) -> dict[str, Any]:
    """Everything measured, JSON-ready. Every ranking is cut to ``limit`` before scoring."""
    questions = dataset.questions
    turns = sum(len(c.turns) for c in dataset.conversations)
    retrievers: dict[str, Any] = {}
    for run in runs:
        rankings = {key: ranked[:limit] for key, ranked in run.rankings.items()}
        ingest_s = run.ingest_s
        retrievers[run.name] = {
            "metrics": summarise(questions, rankings),
            "latency": latency_summary(run.latencies_s),
            "ingest_s": ingest_s,
            "ingest_turns_per_s": turns / ingest_s if ingest_s else None,
            "details": run.details,
        }
    return {
        "benchmark": "locomo",
        "dataset": str(path),
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "version": __version__,
        "python": platform.python_version(),
        "limit": limit,
        "categories": {str(c): name for c, name in CATEGORY_NAMES.items()},
        "counts": {
            "conversations": len(dataset.conversations),
            "sessions": sum(len(c.sessions) for c in dataset.conversations),
            "turns": turns,
            "questions": len(questions),
            "scored_questions": sum(1 for q in questions if q.category in SCORED_CATEGORIES),
            "by_category": {str(c): sum(1 for q in questions if q.category == c) for c in CATEGORY_NAMES},
        },
        "evidence_repair": dataset.repair.as_dict(),
        "retrievers": retrievers,
        "questions": [
            {
                "key": q.key,
                "category": q.category,
                "question": q.text,
                "evidence": list(q.evidence),
                "rankings": {run.name: run.rankings.get(q.key, [])[:limit] for run in runs},
            }
            for q in questions
        ],
    }


def table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows, strict=True)]
    lines = [
        "  ".join(
            h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths, strict=True))
        )
    ]
    lines.append("  ".join("-" * w for w in widths))
    for row in rows:
        lines.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    return "\n".join(lines)


def _number(value: object, fmt: str = ".3f") -> str:
    return "-" if value is None else format(value, fmt)


def format_report(report: Mapping[str, Any]) -> str:
    """The report as plain-text tables: one per metric, then speed, then the evidence repair."""
    counts = report["counts"]
    columns = [*(str(c) for c in SCORED_CATEGORIES), "overall", str(ADVERSARIAL)]
    names = report["categories"]
    header = [
        "retriever",
        *(f"{names[c]} ({c})" for c in columns[:4]),
        "overall 1-4",
        f"{names[str(ADVERSARIAL)]} (5)",
    ]
    by_cat = counts["by_category"]
    out = [
        f"LoCoMo retrieval: {counts['conversations']} conversations, {counts['sessions']} sessions, "
        f"{counts['turns']} turns; {counts['scored_questions']} questions in categories 1-4 "
        f"({', '.join(f'{c}: {by_cat[c]}' for c in columns[:4])}), {by_cat[str(ADVERSARIAL)]} adversarial; "
        f"recall_memory limit={report['limit']}",
    ]
    retrievers: Mapping[str, Any] = report["retrievers"]
    for metric in TABLE_METRICS:
        rows = [
            [name, *(_number(r["metrics"][col].get(metric)) for col in columns)]
            for name, r in retrievers.items()
        ]
        out += ["", metric, table(header, rows)]

    speed_rows = []
    for name, r in retrievers.items():
        lat = r["latency"]
        speed_rows.append(
            [
                name,
                _number(r["ingest_s"], ".1f"),
                _number(r["ingest_turns_per_s"], ".0f"),
                _number(lat.get("p50_ms"), ".1f"),
                _number(lat.get("p95_ms"), ".1f"),
                _number(lat.get("mean_ms"), ".1f"),
            ]
        )
    out += [
        "",
        "speed (server: wall time seen by the MCP client over stdio; baselines: in-process)",
        table(["retriever", "ingest s", "turns/s", "query p50 ms", "p95 ms", "mean ms"], speed_rows),
    ]
    server = retrievers.get("hybrid-memory")
    if server is not None:
        details = server["details"]
        out += [
            "",
            f"server: start-up {details['start_up_s']['per_server_mean']:.1f} s per process "
            f"(model load included, not in ingest); ingest {details['ingest']}; "
            f"message results without message_id: {details['messages_without_message_id']}",
            "evidence hits in the top 10, by the channels that found them: "
            f"{details['evidence_hits_at_10_by_channels']}",
        ]
    repair = report["evidence_repair"]
    out += [
        "",
        "evidence repair: "
        + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in repair.items() if k != "examples"),
        *(f"  {line}" for line in repair["examples"]),
    ]
    return "\n".join(out)


def write_json(report: Mapping[str, Any], path: Path) -> None:
    """Write the report as indented JSON, creating the parent directory."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
