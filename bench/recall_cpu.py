"""Recall's own CPU (this thread's) per call, and every result written out to compare two versions.

    python bench/recall_cpu.py DIR [--queries 300] [--out results.json]
    python bench/recall_cpu.py --compare A.json B.json

``DIR`` is a store ``bench/scale.py --keep DIR`` left (hash documents). Each query is recalled
under a few option sets (the default limit of 10, a limit of 5 without context, messages only,
one thread); the clock is fixed, so recency and the answer do not move between two runs. Recalls
do not record their hits' accesses (``record=False``): the store is read, never written.

What is timed is ``time.thread_time`` around each recall: the CPU of the thread that runs the
event loop, which a machine shared with other work does not inflate as it does wall time. The
results (ids, scores, order, text, every field of each hit) go to ``--out``; ``--compare`` says
whether two such files are the same, byte for byte, and where they first differ.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import anyio

from hybrid_memory.embeddings import build_embedder
from hybrid_memory.models import MemoryFilter, MemoryKind
from hybrid_memory.service import RecallOptions
from hybrid_memory.service.recall import pipeline
from hybrid_memory.settings import load_settings
from latency import QUERIES, SEED, _fill
from scale import SCOPE, HashDocuments, Stores

NOW = datetime(2030, 1, 1, tzinfo=UTC)
"""The clock every recall sees: the same recency in every run."""


def option_sets(thread: str) -> list[tuple[str, RecallOptions]]:
    return [
        ("default", RecallOptions(limit=10)),
        ("short", RecallOptions(limit=5, context=False)),
        ("messages", RecallOptions(limit=10, kinds=[MemoryKind.MESSAGE])),
        ("thread", RecallOptions(limit=10, thread_id=thread)),
    ]


async def run(data: Path, n_queries: int) -> dict[str, Any]:
    pipeline.utcnow = lambda: NOW  # type: ignore[attr-defined]
    rng = random.Random(SEED + 1)
    queries = [_fill(rng.choice(QUERIES), rng) for _ in range(n_queries)]
    settings = load_settings(data_dir=data, project="bench", vector_backend="edge", graph_backend="sqlite")
    real = build_embedder(settings.embedding)
    await real.embed_query("load the model")
    stores = Stores(settings, HashDocuments(real))
    service = await stores.open()
    results: list[Any] = []
    cpu: dict[str, list[float]] = {}
    try:
        page, _ = await stores.vectors.scroll(MemoryFilter(scope=SCOPE), 1)
        thread = page[0].thread_id or ""
        sets = option_sets(thread)
        for q in queries[:5]:  # warm the model and the caches as a running server has them
            await service.recall(SCOPE, q, RecallOptions(limit=10), record=False)
        for q in queries:
            for name, options in sets:
                started = time.thread_time()
                result = await service.recall(SCOPE, q, options, record=False)
                spent = time.thread_time() - started
                cpu.setdefault(name, []).append(spent)
                results.append({"query": q, "options": name, "result": result.model_dump(mode="json")})
    finally:
        await stores.close()
        await real.close()
    return {
        "thread_ms": {k: 1000 * statistics.median(v) for k, v in cpu.items()},
        "thread_ms_mean": {k: 1000 * statistics.fmean(v) for k, v in cpu.items()},
        "results": results,
    }


def compare(a: Path, b: Path) -> int:
    left = json.loads(a.read_text(encoding="utf-8"))["results"]
    right = json.loads(b.read_text(encoding="utf-8"))["results"]
    if len(left) != len(right):
        print(f"different lengths: {len(left)} vs {len(right)}")
        return 1
    differ = [n for n, (x, y) in enumerate(zip(left, right, strict=True)) if json.dumps(x) != json.dumps(y)]
    hits = sum(len(x["result"]["results"]) for x in left)
    if not differ:
        print(f"same: {len(left)} recalls, {hits} hits, byte for byte")
        return 0
    n = differ[0]
    first = left[n]
    print(f"{len(differ)} of {len(left)} recalls differ; the first: {first['query']!r} ({first['options']})")
    print(json.dumps(left[n]["result"], indent=1)[:3000])
    print(json.dumps(right[n]["result"], indent=1)[:3000])
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("data", type=Path, nargs="?")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", type=Path, nargs=2)
    args = parser.parse_args(argv)
    if args.compare:
        return compare(*args.compare)
    if args.data is None:
        parser.error("name the store's directory, or --compare two result files")
    report = anyio.run(run, args.data, args.queries)
    print(json.dumps(report["thread_ms"]), file=sys.stderr)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
