"""Ingest rate and recall latency at 1k and 10k memories, in-process, real model, embedded stores.

    python bench/latency.py [--sizes 1000 10000] [--queries 200] [--out bench/results/latency.json]

The model comes from ``HYBRID_MEMORY_EMBEDDING_MODEL_PATH`` (or is downloaded by
name). The corpus is synthetic chat: threads of 20 user/assistant turns built
from word lists with a seeded RNG, so every run ingests the same text, offline.

Each stage grows the same store to the next size, then measures, in this process:

- ingest: ``remember_thread`` per thread (20 messages a call) -> memories/s, and
  the raw embedder on the same texts in the same batches, for the ratio;
- recall: ``MemoryService.recall(limit=10)`` per query (embedding, dense + keyword
  + graph channels, fusion), against the floor of what any vector recall must do:
  ``embed_query`` plus one dense search straight on the vector store;
- both again after the store's HNSW build (``optimize``), which Qdrant Edge only
  runs in the background when the store is idle.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from time import perf_counter
from typing import Any

import anyio

from hybrid_memory.backends import open_graph_store, open_vector_store
from hybrid_memory.embeddings import build_embedder
from hybrid_memory.evaluation.locomo import percentile
from hybrid_memory.models import MemoryFilter, MessageIn, Scope
from hybrid_memory.service import MemoryService, RecallOptions, ThreadDraft
from hybrid_memory.settings import load_settings

REPO = Path(__file__).resolve().parents[1]
SEED = 20240501
THREAD_MESSAGES = 20
RECALL_LIMIT = 10
RAW_EMBED_THREADS = 50

NAMES = [
    "Ana", "Ben", "Chloe", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kemi",
    "Luca", "Maya", "Nils", "Omar", "Priya", "Quinn", "Rosa", "Sami", "Tara",
]  # fmt: skip
PLACES = [
    "the old harbour", "Lisbon", "the farmers market", "Kyoto", "the climbing gym", "grandma's cabin",
    "the city library", "Oslo", "the botanical garden", "Marrakesh", "the office rooftop", "the lake house",
    "Toronto", "the jazz bar downtown", "the community centre", "Valencia", "the ski resort", "Nairobi",
]  # fmt: skip
ACTIVITIES = [
    "hiking", "a pottery class", "salsa lessons", "trail running", "a chess tournament", "kayaking",
    "a photography walk", "volunteering at the shelter", "a sourdough workshop", "bouldering",
    "a board game night", "birdwatching", "a coding meetup", "open-water swimming", "a wine tasting",
]  # fmt: skip
OBJECTS = [
    "bike", "laptop", "garden shed", "espresso machine", "car battery", "guitar", "tent", "dishwasher",
    "roof gutter", "sewing machine", "router", "bookshelf", "kayak paddle", "drone", "piano",
]  # fmt: skip
FOODS = [
    "ramen", "tacos", "dumplings", "paella", "falafel", "pho", "sushi", "curry", "pierogi",
    "bibimbap", "gelato", "croissants",
]  # fmt: skip
ADJECTIVES = [
    "exhausting", "wonderful", "stressful", "hilarious", "peaceful", "chaotic", "inspiring",
    "frustrating", "cosy", "surprising",
]  # fmt: skip
WHEN = [
    "last weekend", "yesterday", "on Tuesday", "in March", "two weeks ago", "over the holidays",
    "this morning", "after work on Friday", "during the heatwave", "on my birthday",
]  # fmt: skip
RELATIVES = [
    "sister", "brother", "mum", "dad", "cousin", "partner", "neighbour", "roommate",
]  # fmt: skip

USER_TURNS = [
    "I went {activity} with {name} near {place} {when}, and honestly it was {adj}.",
    "Can you remind me what {name} said about the {object} {when}?",
    "My {relative} wants to try the {food} place in {place}; is it worth it?",
    "I'm thinking about signing up for {activity} again, the one {name} recommended.",
    "We finally fixed the {object} {when}; {name} helped a lot and stayed for {food}.",
    "I've been feeling {adj} since the trip to {place} with my {relative}.",
    "Note to self: {name} lends me the {object} until the end of the month.",
    "Do you think {activity} is a good idea for my {relative}'s birthday at {place}?",
]
ASSISTANT_TURNS = [
    "That sounds {adj}! How long has {name} been into {activity}?",
    "You mentioned the {object} came from {place}; {name} might know a repair shop.",
    "For {food} near {place}, going early {when} usually avoids the queue.",
    "I remember you said {activity} with your {relative} was {adj}. Want to plan another round?",
    "Sure. {name} said the {object} needs a new part before you use it again.",
    "Noted: {name} recommended {activity} at {place}. Shall I keep that in mind for later?",
]
QUERIES = [
    "when did I go {activity} with {name}?",
    "what did {name} say about the {object}?",
    "where can my {relative} get good {food}?",
    "who helped me fix the {object}?",
    "how did I feel after visiting {place}?",
    "which activity did {name} recommend?",
    "plans for my {relative}'s birthday",
    "{food} near {place}",
]


def _fill(template: str, rng: random.Random) -> str:
    return template.format(
        name=rng.choice(NAMES),
        place=rng.choice(PLACES),
        activity=rng.choice(ACTIVITIES),
        object=rng.choice(OBJECTS),
        food=rng.choice(FOODS),
        adj=rng.choice(ADJECTIVES),
        when=rng.choice(WHEN),
        relative=rng.choice(RELATIVES),
    )


def synthetic_thread(rng: random.Random, number: int) -> list[MessageIn]:
    """One conversation of ``THREAD_MESSAGES`` alternating turns, dated a day after the previous one."""
    start = datetime(2024, 1, 1, 9, 0, tzinfo=UTC) + timedelta(days=number)
    return [
        MessageIn(
            role="user" if i % 2 == 0 else "assistant",
            content=_fill(rng.choice(USER_TURNS if i % 2 == 0 else ASSISTANT_TURNS), rng),
            id=f"m{i}",
            created_at=start + timedelta(minutes=i),
        )
        for i in range(THREAD_MESSAGES)
    ]


def summary(seconds: Sequence[float]) -> dict[str, float]:
    return {
        "n": len(seconds),
        "median_ms": statistics.median(seconds) * 1000,
        "p95_ms": percentile(seconds, 95) * 1000,
    }


async def timed(calls: Sequence[Callable[[], Awaitable[object]]]) -> list[float]:
    out = []
    for call in calls:
        started = perf_counter()
        await call()
        out.append(perf_counter() - started)
    return out


async def measure_recall(
    service: MemoryService, vectors: Any, embedder: Any, scope: Scope, queries: Sequence[str]
) -> dict[str, Any]:
    """Recall through the service, and its floor: embed_query plus one dense search on the store.

    Query by query, the recall and its floor in turn, each first every other query: both meet the
    store, its caches and the machine's load as they stand at that query, neither warms the other's.
    """
    options = RecallOptions(limit=RECALL_LIMIT)
    flt = MemoryFilter(scope=scope)
    recall: list[float] = []
    embed: list[float] = []
    dense: list[float] = []
    for n, q in enumerate(queries):
        for part in ("recall", "floor") if n % 2 == 0 else ("floor", "recall"):
            if part == "recall":
                recall += await timed([partial(service.recall, scope, q, options)])
                continue
            started = perf_counter()
            vector = await embedder.embed_query(q)
            embed.append(perf_counter() - started)
            dense += await timed([partial(vectors.search_dense, vector, flt, RECALL_LIMIT)])
    floor = [e + d for e, d in zip(embed, dense, strict=True)]
    return {
        "recall": summary(recall),
        "embed_query": summary(embed),
        "dense_search": summary(dense),
        "embed_plus_dense": summary(floor),
        "recall_over_floor": statistics.median(recall) / statistics.median(floor),
    }


async def bench(sizes: Sequence[int], n_queries: int) -> dict[str, Any]:
    rng = random.Random(SEED)
    queries = [_fill(rng.choice(QUERIES), rng) for _ in range(n_queries)]
    stages: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="hybrid-memory-bench-") as tmp:
        settings = load_settings(
            data_dir=Path(tmp), project="bench", vector_backend="edge", graph_backend="sqlite"
        )
        embedder = build_embedder(settings.embedding)
        started = perf_counter()
        await embedder.embed_query("load the model")
        model_load_s = perf_counter() - started
        try:
            async with (
                open_vector_store(
                    settings, dimension=embedder.dimension, model=embedder.model_name
                ) as vectors,
                open_graph_store(settings) as graph,
            ):
                service = MemoryService(settings=settings, vectors=vectors, graph=graph, embedder=embedder)
                scope = Scope(project="bench")
                stored = threads = 0
                for size in sizes:
                    texts: list[list[str]] = []
                    calls: list[float] = []
                    before = stored
                    while stored < size:
                        messages = synthetic_thread(rng, threads)
                        started = perf_counter()
                        result = await service.remember_thread(
                            scope, ThreadDraft(f"thread-{threads}", messages)
                        )
                        calls.append(perf_counter() - started)
                        stored += result.chunks
                        threads += 1
                        texts.append([str(m.content) for m in messages])
                    ingest_rate = (stored - before) / sum(calls)
                    stage: dict[str, Any] = {
                        "memories": await vectors.count(MemoryFilter(scope=scope)),
                        # Measured at once, before the store has been idle long enough to index itself.
                        "recall": await measure_recall(service, vectors, embedder, scope, queries),
                    }
                    optimize = getattr(vectors, "optimize", None)
                    if optimize is not None:
                        started = perf_counter()
                        changed = await optimize()
                        stage["optimize_s"] = perf_counter() - started
                        if changed:
                            stage["recall_optimized"] = await measure_recall(
                                service, vectors, embedder, scope, queries
                            )
                    # The raw embedder on (up to) the stage's first 1,000 texts, in the same batches.
                    sample = texts[:RAW_EMBED_THREADS]
                    raw = await timed([partial(embedder.embed_documents, t) for t in sample])
                    raw_rate = sum(len(t) for t in sample) / sum(raw)
                    stage["ingest"] = {
                        "memories": stored - before,
                        "seconds": sum(calls),
                        "memories_per_s": ingest_rate,
                        "per_call": summary(calls),
                        "raw_embed_docs_per_s": raw_rate,
                        "ingest_over_raw_embed": ingest_rate / raw_rate,
                    }
                    stages.append(stage)
                    print_stage(stage, file=sys.stderr)
        finally:
            await embedder.close()
    return {
        "benchmark": "latency",
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "model": embedder.model_name,
        "model_load_s": model_load_s,
        "thread_messages": THREAD_MESSAGES,
        "recall_limit": RECALL_LIMIT,
        "queries": n_queries,
        "seed": SEED,
        "stages": stages,
    }


def print_stage(stage: dict[str, Any], file: Any = sys.stdout) -> None:
    ingest = stage["ingest"]
    print(
        f"{stage['memories']:>6} memories | ingest {ingest['memories_per_s']:.0f} memories/s "
        f"(raw embedder {ingest['raw_embed_docs_per_s']:.0f} docs/s, "
        f"ratio {ingest['ingest_over_raw_embed']:.2f}; "
        f"per 20-message call median {ingest['per_call']['median_ms']:.0f} ms)",
        file=file,
    )
    if "optimize_s" in stage and "recall_optimized" not in stage:
        print(
            f"{'':>6}          | optimize: nothing to build ({stage['optimize_s'] * 1000:.1f} ms)", file=file
        )
    for label in ("recall", "recall_optimized"):
        if label not in stage:
            continue
        r = stage[label]
        note = " (as ingested)" if label == "recall" else f" (after a {stage['optimize_s']:.1f} s HNSW build)"
        print(
            f"{'':>6}          | recall{note}: median {r['recall']['median_ms']:.1f} ms, "
            f"p95 {r['recall']['p95_ms']:.1f} ms; embed_query {r['embed_query']['median_ms']:.1f} ms + "
            f"dense search {r['dense_search']['median_ms']:.2f} ms "
            f"= {r['embed_plus_dense']['median_ms']:.1f} ms; "
            f"recall / floor {r['recall_over_floor']:.2f}x",
            file=file,
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[1_000, 10_000], help="store sizes to measure at"
    )
    parser.add_argument("--queries", type=int, default=200, help="recall queries per stage")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "latency.json")
    args = parser.parse_args(argv)
    report = anyio.run(bench, sorted(args.sizes), args.queries)
    print(
        f"model {report['model']} (loaded in {report['model_load_s']:.1f} s); "
        f"{args.queries} queries per stage"
    )
    for stage in report["stages"]:
        print_stage(stage)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
