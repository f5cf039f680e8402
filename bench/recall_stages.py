"""Where one recall's time goes, stage by stage, on a store kept between runs.

    python bench/recall_stages.py [--store DIR] [--size 10000] [--documents model|hash]
                                  [--queries 200] [--rounds 3]

The first run fills ``--store`` with the synthetic chat of ``bench/latency.py``
(``--documents`` as in ``bench/scale.py``) and indexes it; later runs reuse it, so
two versions of the code can be timed on the same store, one after the other. Each
round times every query's recall through ``MemoryService.recall`` and the floor
(``embed_query`` + one dense search of 10), then the same recalls again with each
pipeline stage timed (the wrappers cost a few microseconds a stage). Printed: per
round, recall and floor p50 and their ratio; then each stage's p50 and mean.
"""

from __future__ import annotations

import argparse
import inspect
import os
import random
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from time import perf_counter
from typing import Any

import anyio

from hybrid_memory.embeddings import build_embedder
from hybrid_memory.models import MemoryFilter
from hybrid_memory.service import RecallOptions
from hybrid_memory.service.recall import channels, expand, state
from hybrid_memory.settings import load_settings
from latency import QUERIES, SEED, _fill, timed
from scale import SCOPE, HashDocuments, Stores, grow

LIMIT = 10
STAGES: tuple[tuple[Any, str], ...] = (
    (state, "plan"),
    (channels, "gather"),
    (state, "fuse"),
    (expand, "add_neighbours"),
    (expand, "resolve"),
    (state, "rank"),
    (expand, "add_successors"),
    (expand, "add_context"),
    (state, "render"),
)


def _timed(fn: Callable[..., Any], times: list[float], is_async: bool) -> Callable[..., Any]:
    if is_async:

        async def run_async(*args: Any, **kwargs: Any) -> Any:
            started = perf_counter()
            try:
                return await fn(*args, **kwargs)
            finally:
                times.append(perf_counter() - started)

        return run_async

    def run(*args: Any, **kwargs: Any) -> Any:
        started = perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            times.append(perf_counter() - started)

    return run


def instrument(vectors: Any, graph: Any, embedder: Any) -> tuple[dict[str, list[float]], Callable[[], None]]:
    """Wrap each stage (and the store calls inside ``gather``) with a timer; returns the undo."""
    times: dict[str, list[float]] = defaultdict(list)
    undo: list[Callable[[], None]] = []
    targets: list[tuple[Any, str, str]] = [(module, name, name) for module, name in STAGES]
    targets += [
        (embedder, "embed_query", "embed_query"),
        (vectors, "search_many", "gather: search_many"),
        (graph, "search_notes", "gather: search_notes"),
    ]
    for owner, name, label in targets:
        original = getattr(owner, name)
        setattr(owner, name, _timed(original, times[label], inspect.iscoroutinefunction(original)))
        undo.append(lambda owner=owner, name=name, original=original: setattr(owner, name, original))

    def restore() -> None:
        for step in reversed(undo):
            step()

    return times, restore


def ms(values: Sequence[float]) -> str:
    return f"{statistics.median(values) * 1000:6.2f} p50 {statistics.fmean(values) * 1000:6.2f} mean"


async def run(args: argparse.Namespace) -> None:
    rng = random.Random(SEED)
    queries = [_fill(rng.choice(QUERIES), rng) for _ in range(args.queries)]
    settings = load_settings(
        data_dir=args.store, project="bench", vector_backend="edge", graph_backend="sqlite"
    )
    real = build_embedder(settings.embedding)
    await real.embed_query("load the model")
    embedder: Any = HashDocuments(real) if args.documents == "hash" else real
    stores = Stores(settings, embedder)
    service = await stores.open()
    try:
        stored = await stores.vectors.count(MemoryFilter(scope=SCOPE))
        if stored < args.size:
            threads = stored // 20 + 1
            await grow(service, random.Random(SEED + stored), threads, stored, args.size)
            await stores.vectors.optimize()
            stored = await stores.vectors.count(MemoryFilter(scope=SCOPE))
        print(f"{stored} memories in {args.store}", file=sys.stderr)
        options = RecallOptions(limit=LIMIT)
        flt = MemoryFilter(scope=SCOPE)
        vectors = [await real.embed_query(q) for q in queries]
        for q in queries[:20]:  # warm caches and the thread pool
            await service.recall(SCOPE, q, options)
        for round_ in range(args.rounds):
            recall = await timed([lambda q=q: service.recall(SCOPE, q, options) for q in queries])
            embed = await timed([lambda q=q: real.embed_query(q) for q in queries])
            dense = await timed([lambda v=v: stores.vectors.search_dense(v, flt, LIMIT) for v in vectors])
            floor = [e + d for e, d in zip(embed, dense, strict=True)]
            r50, f50 = statistics.median(recall), statistics.median(floor)
            p95 = statistics.quantiles(recall, n=20)[-1]
            print(
                f"round {round_}: recall p50 {r50 * 1000:.2f} ms (p95 {p95 * 1000:.1f}); floor "
                f"{f50 * 1000:.2f} ms (embed {statistics.median(embed) * 1000:.2f} + dense "
                f"{statistics.median(dense) * 1000:.2f}); ratio {r50 / f50:.2f}x; "
                f"load {os.getloadavg()[0]:.1f}"
            )
        graph = service._stores.graph
        times, restore = instrument(stores.vectors, graph, real)
        try:
            await timed([lambda q=q: service.recall(SCOPE, q, options) for q in queries])
        finally:
            restore()
        for label, values in times.items():
            if values:
                print(f"  {label:<24} {ms(values)} ms ({len(values)} calls)")
    finally:
        await stores.close()
        await real.close()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--store", type=Path, default=Path("/tmp/hybrid-memory-recall-stages"))
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--documents", choices=("model", "hash"), default="model")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    anyio.run(run, parser.parse_args(argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
