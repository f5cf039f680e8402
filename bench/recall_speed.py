"""Recall latency of two configurations in the same run, query by query, alternating.

    python bench/recall_speed.py [--locomo-store DIR] [--lme-store DIR] [--lme-items N] [--rounds N]

Over the stores recall_ablation.py and longmemeval_ablation.py built, every question is asked
``--rounds`` times with each configuration in turn ("before": without the speakers and outcomes
rules; "default": today's), so both see the same load. Prints the median and p95 of each and
the ratio of the medians, per benchmark.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from time import perf_counter

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedding_cache import CachingEmbedder
from hybrid_memory.backends import open_graph_store, open_vector_store
from hybrid_memory.embeddings import build_embedder
from hybrid_memory.evaluation.locomo import load_locomo
from hybrid_memory.evaluation.longmemeval import load_longmemeval
from hybrid_memory.models import Scope
from hybrid_memory.service.recall import Recaller, RecallOptions, recall_config
from hybrid_memory.service.stores import Stores
from hybrid_memory.settings import load_settings
from longmemeval_ablation import DEFAULT_DATASET as LME_DATASET
from longmemeval_ablation import spread
from recall_ablation import DEFAULT_DATASET as LOCOMO_DATASET
from recall_ablation import VARIANTS

CONFIGS = ("before", "default")


async def timed(
    store: Path, project: str, questions: list[str], cache: Path, rounds: int
) -> dict[str, list[float]]:
    settings = load_settings(
        data_dir=store / project, project=project, vector_backend="edge", graph_backend="sqlite"
    )
    embedder = CachingEmbedder(build_embedder(settings.embedding), cache)
    out: dict[str, list[float]] = {name: [] for name in CONFIGS}
    try:
        async with (
            open_vector_store(settings, dimension=embedder.dimension, model=embedder.model_name) as vectors,
            open_graph_store(settings) as graph,
        ):
            base = recall_config(settings.ranking, timeout_s=settings.backend_timeout_s)
            stores = Stores.over(vectors, graph, embedder)
            recallers = {
                name: Recaller(settings=settings, stores=stores, config=VARIANTS[name](base))
                for name in CONFIGS
            }
            scope = Scope(project=project)
            for question in questions:
                await recallers["default"].recall(
                    scope, question, RecallOptions(limit=20)
                )  # warm: vectors cached
                for _ in range(rounds):
                    for name, recaller in recallers.items():
                        started = perf_counter()
                        await recaller.recall(scope, question, RecallOptions(limit=20))
                        out[name].append(perf_counter() - started)
    finally:
        await embedder.close()
    return out


def report(name: str, times: dict[str, list[float]]) -> None:
    medians = {k: statistics.median(v) * 1000 for k, v in times.items()}
    p95 = {k: sorted(v)[int(len(v) * 0.95)] * 1000 for k, v in times.items()}
    cells = ", ".join(f"{k} median {medians[k]:.1f} ms (p95 {p95[k]:.1f})" for k in CONFIGS)
    ratio = medians["default"] / medians["before"]
    print(f"{name}: {len(times['default'])} recalls each; {cells}; ratio {ratio:.3f}")


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo-store", type=Path, default=Path("/tmp/hm-locomo/base"))
    parser.add_argument("--locomo-cache", type=Path, default=Path("/tmp/hm-locomo/vectors.sqlite"))
    parser.add_argument("--conversations", type=int, default=2)
    parser.add_argument("--lme-store", type=Path, default=Path("/tmp/hm-lme/base"))
    parser.add_argument("--lme-cache", type=Path, default=Path("/tmp/hm-lme/vectors.sqlite"))
    parser.add_argument("--lme-items", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    locomo: dict[str, list[float]] = {name: [] for name in CONFIGS}
    for conv in load_locomo(LOCOMO_DATASET).conversations[: args.conversations]:
        qs = [q.text for q in conv.questions if q.category in (1, 2, 3, 4)]
        for name, spent in (
            await timed(args.locomo_store, conv.id, qs, args.locomo_cache, args.rounds)
        ).items():
            locomo[name] += spent
    report("LoCoMo", locomo)
    lme: dict[str, list[float]] = {name: [] for name in CONFIGS}
    items = [
        i for i in spread(load_longmemeval(LME_DATASET)) if (args.lme_store / i.id / "ingested").exists()
    ]
    for item in items[: args.lme_items]:
        for name, spent in (
            await timed(args.lme_store, item.id, [item.question], args.lme_cache, args.rounds)
        ).items():
            lme[name] += spent
    report("LongMemEval", lme)
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
