"""LongMemEval through the real server: ``hybrid-memory serve`` as a child process, over MCP stdio.

Each item gets its own server process and its own project scope
(``HYBRID_MEMORY_PROJECT=<question id>``) in one temporary data dir, so no item sees
another's haystack. Per item: a warm-up ``recall_memory`` (start-up, not timed as a
query), one ``remember_thread`` per haystack session (thread = session id, message id =
``<session id>#<turn index>``, the session's date as ``created_at``), then one
``recall_memory(query=question, limit=limit)`` whose hits are scored by their own turn:
the turns a hit carries as ``context_before``/``context_after`` are not ranked results.
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path
from time import perf_counter
from typing import Any

from mcp import Client, StdioServerParameters

from hybrid_memory.evaluation.locomo import RetrieverRun, latency_summary
from hybrid_memory.evaluation.longmemeval import Item, Session, load_longmemeval, summarise
from hybrid_memory.evaluation.runner import (
    BASELINE_DEPTH,
    SERVER_RUN,
    WARM_UP_QUERY,
    EvalOptions,
    EvaluationError,
    call_tool,
    server_env,
)

logger = logging.getLogger(__name__)


def session_messages(session: Session) -> list[dict[str, Any]]:
    """The ``remember_thread`` messages of one haystack session."""
    return [
        {"role": t.role, "content": t.content, "id": t.id, "created_at": session.date.isoformat()}
        for t in session.turns
    ]


def ranked_turns(hits: list[dict[str, Any]]) -> list[str]:
    """The hits' own turn ids, best first; a hit without one keeps its rank as a miss."""
    return [str(h.get("message_id") or f"<{h.get('kind')}:{h.get('id')}>") for h in hits]


async def _run_item(
    item: Item, data_dir: Path, model_path: Path | None, limit: int, run: RetrieverRun
) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hybrid_memory", "serve"],
        env=server_env(data_dir, item.id, model_path),
    )
    async with Client(params) as client:
        await call_tool(client, "recall_memory", {"query": WARM_UP_QUERY, "limit": 1})
        started = perf_counter()
        for session in item.sessions:
            await call_tool(
                client, "remember_thread", {"thread_id": session.id, "messages": session_messages(session)}
            )
        run.ingest_s = (run.ingest_s or 0.0) + perf_counter() - started
        started = perf_counter()
        found = await call_tool(client, "recall_memory", {"query": item.question, "limit": limit})
        run.latencies_s.append(perf_counter() - started)
        run.rankings[item.id] = ranked_turns(found["results"])


async def server_run(items: list[Item], options: EvalOptions) -> RetrieverRun:
    """Every item through a fresh server, all in one data dir or (``separate_stores``) each in its own."""
    run = RetrieverRun(name=SERVER_RUN, ingest_s=0.0)
    with tempfile.TemporaryDirectory(prefix="hybrid-memory-longmemeval-") as tmp:
        for number, item in enumerate(items, 1):
            try:
                data_dir = Path(tmp) / item.id if options.separate_stores else Path(tmp)
                await _run_item(item, data_dir, options.embedding.model_path, options.limit, run)
            except Exception as exc:
                raise EvaluationError(
                    f"{item.id}: the server failed ({exc}); its own error is printed above"
                ) from exc
            logger.info("%d/%d %s: %d turns", number, len(items), item.id, len(item.turns))
    return run


async def evaluate_longmemeval(
    path: Path, options: EvalOptions, *, items: int | None = None
) -> dict[str, Any]:
    """The server over stdio, then BM25 and dense baselines over the same turns in this process."""
    limit = options.limit
    dataset = load_longmemeval(path, items=items, half=options.half)
    logger.info("LongMemEval: %d items, %d turns", len(dataset), sum(len(i.turns) for i in dataset))
    runs = [await server_run(dataset, options)]
    if options.baselines:
        from hybrid_memory.evaluation.baselines import baseline_runs, item_haystacks

        runs += await baseline_runs(item_haystacks(dataset), options.embedding, BASELINE_DEPTH)
    return {
        "benchmark": "longmemeval",
        "dataset": str(path),
        "limit": limit,
        "counts": {"items": len(dataset), "turns": sum(len(i.turns) for i in dataset)},
        "retrievers": {
            r.name: {
                "metrics": summarise(dataset, {k: v[:limit] for k, v in r.rankings.items()}),
                "latency": latency_summary(r.latencies_s),
                "ingest_s": r.ingest_s,
                "details": r.details,
            }
            for r in runs
        },
        "questions": [
            {
                "id": i.id,
                "type": i.type,
                "question": i.question,
                "evidence": list(i.evidence),
                "answer_sessions": list(i.answer_sessions),
                "rankings": {r.name: r.rankings.get(i.id, [])[:limit] for r in runs},
            }
            for i in dataset
        ],
    }


TABLE_METRICS = ("T-R@5", "T-R@10", "T-R@20", "nDCG@10", "MRR", "S-any@5", "S-all@10")


def format_lme_report(report: dict[str, Any]) -> str:
    """The report as plain text: the overall table, then MRR and nDCG@10 by question type."""
    from hybrid_memory.evaluation.longmemeval import QUESTION_TYPES
    from hybrid_memory.evaluation.report import table

    retrievers: dict[str, Any] = report["retrievers"]
    counts = report["counts"]
    out = [
        f"LongMemEval retrieval: {counts['items']} questions, {counts['turns']} turns; "
        f"recall_memory limit={report['limit']}; each hit scored by its own turn",
        "",
        table(
            ["retriever", *TABLE_METRICS],
            [
                [name, *(f"{r['metrics']['overall'][m]:.3f}" for m in TABLE_METRICS)]
                for name, r in retrievers.items()
            ],
        ),
    ]
    types = [t for t in QUESTION_TYPES if any(t in r["metrics"] for r in retrievers.values())]
    for metric in ("MRR", "nDCG@10", "T-R@10"):
        header = [
            "retriever",
            *(f"{t} ({next(iter(retrievers.values()))['metrics'][t]['n']:.0f})" for t in types),
        ]
        rows = [
            [name, *(f"{r['metrics'][t][metric]:.3f}" if t in r["metrics"] else "-" for t in types)]
            for name, r in retrievers.items()
        ]
        out += ["", f"{metric} by question type", table(header, rows)]
    speed = [
        [
            name,
            f"{r['ingest_s']:.1f}" if r["ingest_s"] is not None else "-",
            f"{r['latency'].get('p50_ms', 0.0):.1f}",
            f"{r['latency'].get('p95_ms', 0.0):.1f}",
        ]
        for name, r in retrievers.items()
    ]
    out += [
        "",
        "speed (server: wall time seen by the MCP client over stdio; baselines: in-process)",
        table(["retriever", "ingest s", "query p50 ms", "p95 ms"], speed),
    ]
    return "\n".join(out)
