"""Recall ablation on the LongMemEval dev set, in-process: recall_ablation.py's variants by question type.

    python bench/longmemeval_ablation.py [PATH] [--store DIR] [--cache FILE] [--variants NAME ...]
        [--items N] [--out FILE.json]

Each item is remembered once (real model, Qdrant Edge, SQLite) into ``--store/<item id>``
(its own project, a thread per session, the session's date on every message; kept between
runs), then its question is asked through ``Recaller`` with each variant's ``RecallConfig``
(limit 20, each hit scored by its own turn). Vectors come through a cache keyed by model and
text (``--cache``), so a store rebuilt with another ingest setting embeds only new texts.
The tuning half is the 1st, 3rd, ... item of each question type, the held-out half the others.
``hybrid-memory eval longmemeval`` over MCP stdio stays the number of record.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from time import perf_counter

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedding_cache import CachingEmbedder
from hybrid_memory.backends import open_graph_store, open_vector_store
from hybrid_memory.embeddings import build_embedder
from hybrid_memory.evaluation.baselines import bm25_rankings
from hybrid_memory.evaluation.lme_runner import session_messages
from hybrid_memory.evaluation.longmemeval import QUESTION_TYPES, Item, load_longmemeval, summarise
from hybrid_memory.models import MessageIn, Scope
from hybrid_memory.service import MemoryService, ThreadDraft, indexer
from hybrid_memory.service.recall import Recaller, RecallOptions, recall_config
from hybrid_memory.service.stores import Stores
from hybrid_memory.settings import load_settings
from recall_ablation import VARIANTS

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "longmemeval" / "lme_s_dev100.json.gz"
LIMIT = 20
COLUMNS = ("T-R@5", "T-R@10", "T-R@20", "nDCG@10", "MRR", "hit@1", "S-any@5", "S-all@10")


def spread(items: Sequence[Item]) -> list[Item]:
    """The items dealt round-robin over question types, so the first N of them are a stratified sample.

    Ingesting all 100 haystacks takes over an hour on one embedding thread; ``--items N`` then
    measures on a sample every type is in, and the halves (even / odd positions) stay stratified too.
    """
    by_type: dict[str, list[Item]] = {}
    for item in items:
        by_type.setdefault(item.type, []).append(item)
    queues = [by_type[t] for t in QUESTION_TYPES if t in by_type]
    out: list[Item] = []
    while any(queues):
        out.extend(q.pop(0) for q in queues if q)
    return out


async def ingest(service: MemoryService, item: Item, scope: Scope) -> None:
    for session in item.sessions:
        messages = [MessageIn.model_validate(m) for m in session_messages(session)]
        await service.remember_thread(scope, ThreadDraft(session.id, messages))


async def run_item(
    item: Item, store: Path, cache: Path, variants: Sequence[str], timings: dict[str, list[float]]
) -> dict[str, list[str]]:
    """Variant name -> the ranked turn ids for this item's question."""
    settings = load_settings(
        data_dir=store / item.id, project=item.id, vector_backend="edge", graph_backend="sqlite"
    )
    embedder = CachingEmbedder(build_embedder(settings.embedding), cache)
    scope = Scope(project=item.id)
    out: dict[str, list[str]] = {}
    try:
        async with (
            open_vector_store(settings, dimension=embedder.dimension, model=embedder.model_name) as vectors,
            open_graph_store(settings) as graph,
        ):
            service = MemoryService(settings=settings, vectors=vectors, graph=graph, embedder=embedder)
            marker = store / item.id / "ingested"
            if not marker.exists():
                started = perf_counter()
                await ingest(service, item, scope)
                marker.write_text("ok")
                timings.setdefault("ingest", []).append(perf_counter() - started)
            base = recall_config(settings.ranking, timeout_s=settings.backend_timeout_s)
            stores = Stores.over(vectors, graph, embedder)
            for name in variants:
                recaller = Recaller(settings=settings, stores=stores, config=VARIANTS[name](base))
                started = perf_counter()
                found = await recaller.recall(scope, item.question, RecallOptions(limit=LIMIT))
                timings.setdefault(name, []).append(perf_counter() - started)
                out[name] = [h.message_id or f"<{h.id}>" for h in found.results]
    finally:
        await embedder.close()
    return out


def print_table(rows: dict[str, dict[str, dict[str, float]]]) -> None:
    print(
        "| variant | half | "
        + " | ".join(COLUMNS)
        + " | "
        + " | ".join(f"MRR {t}" for t in QUESTION_TYPES)
        + " |"
    )
    print("|---|---|" + "---|" * (len(COLUMNS) + len(QUESTION_TYPES)))
    for name, halves in rows.items():
        for half, summary in halves.items():
            if "overall" not in summary:  # a half with no items
                continue
            overall = summary["overall"]
            cells = [f"{overall[c]:.3f}" for c in COLUMNS]
            cells += [f"{summary[t]['MRR']:.3f}" if t in summary else "-" for t in QUESTION_TYPES]
            print(f"| {name} | {half} | " + " | ".join(cells) + " |")


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--store", type=Path, default=Path("/tmp/hybrid-memory-lme"))
    parser.add_argument("--cache", type=Path, default=Path("/tmp/hybrid-memory-lme-vectors.sqlite"))
    parser.add_argument("--variants", nargs="*", default=[], choices=list(VARIANTS))
    parser.add_argument(
        "--items", type=int, metavar="N", help="only the first N items, dealt round-robin over types"
    )
    parser.add_argument(
        "--start", type=int, default=0, help="skip the first N (for a second ingesting process)"
    )
    parser.add_argument("--ready", action="store_true", help="only the items already remembered in --store")
    parser.add_argument(
        "--ready-in", type=Path, help="with --ready: the items remembered in this store instead"
    )
    parser.add_argument("--out", type=Path)
    parser.add_argument(
        "--own-vectors", action="store_true", help="ingest without the previous turn's tail in dense vectors"
    )
    args = parser.parse_args(argv)
    if args.own_vectors:
        indexer.CONTEXT_WEIGHT = 0.0
    os.environ.setdefault("HYBRID_MEMORY_LOG_LEVEL", "WARNING")
    items = spread(load_longmemeval(args.path))[args.start : args.items]
    if args.ready:
        ready = args.ready_in or args.store
        items = [i for i in items if (ready / i.id / "ingested").exists()]
    rankings: dict[str, dict[str, list[str]]] = {name: {} for name in args.variants}
    timings: dict[str, list[float]] = {}
    for number, item in enumerate(items, 1):
        for name, ranked in (await run_item(item, args.store, args.cache, args.variants, timings)).items():
            rankings[name][item.id] = ranked
        print(f"{number}/{len(items)} {item.id} done", file=sys.stderr, flush=True)
    rankings["bm25 baseline"] = bm25_rankings(
        {i.id: [(t.id, t.content) for t in i.turns] for i in items}, {i.id: i.question for i in items}, LIMIT
    )
    # Halves within each question type (its 1st, 3rd, ... item tune; 2nd, 4th, ... held-out), so both
    # halves hold every type.
    seen: dict[str, int] = {}
    tune, held_out = [], []
    for item in items:
        (tune if seen.get(item.type, 0) % 2 == 0 else held_out).append(item)
        seen[item.type] = seen.get(item.type, 0) + 1
    halves = {"tune": tune, "held-out": held_out, "all": items}
    table = {
        name: {half: summarise(part, ranked) for half, part in halves.items()}
        for name, ranked in rankings.items()
    }
    print_table(table)
    for name, spent in timings.items():
        spent = sorted(spent)
        print(f"{name}: median {spent[len(spent) // 2] * 1000:.1f} ms over {len(spent)}", file=sys.stderr)
    if args.out:
        args.out.write_text(json.dumps({"table": table, "rankings": rankings}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
