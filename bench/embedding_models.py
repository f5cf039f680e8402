"""The packaged int8 all-MiniLM-L6-v2 against the fp32 export, in one process, one ORT thread.

    python bench/embedding_models.py --fp32 ../shared/models/all-MiniLM-L6-v2-onnx \
        [--queries 200] [--documents 400] [--rounds 5] [--out bench/results/embedding_models.json]

Both models load first; then each round times, for fp32 and int8 in turn (so that a
change in the machine's load hits both alike): ``embed_query`` once per query, and
``embed_documents`` over all documents in the embedder's own batches. Texts are the
synthetic chat turns and queries of ``latency.py`` (seeded, offline). Reported: the
query latency p50 and the documents/s median over rounds, the int8/fp32 ratios, the
model files' sizes and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from time import perf_counter
from typing import Any

import anyio

from hybrid_memory.embeddings import FastEmbedEmbedder
from hybrid_memory.settings import FP32_MODEL, PACKAGED_MODEL, PACKAGED_MODEL_DIR
from latency import ASSISTANT_TURNS, QUERIES, SEED, USER_TURNS, _fill

REPO = Path(__file__).resolve().parents[1]


async def measure(embedders: dict[str, FastEmbedEmbedder], args: argparse.Namespace) -> dict[str, Any]:
    rng = random.Random(SEED)
    documents = [_fill(rng.choice(USER_TURNS + ASSISTANT_TURNS), rng) for _ in range(args.documents)]
    queries = [_fill(rng.choice(QUERIES), rng) for _ in range(args.queries)]
    for embedder in embedders.values():
        await embedder.warm_up()
    query_ms: dict[str, list[float]] = {name: [] for name in embedders}
    docs_per_s: dict[str, list[float]] = {name: [] for name in embedders}
    for _ in range(args.rounds):
        for name, embedder in embedders.items():
            for query in queries:
                started = perf_counter()
                await embedder.embed_query(query)
                query_ms[name].append((perf_counter() - started) * 1000)
            started = perf_counter()
            await embedder.embed_documents(documents)
            docs_per_s[name].append(len(documents) / (perf_counter() - started))
    results: dict[str, Any] = {
        name: {
            "embed_query_p50_ms": round(statistics.median(query_ms[name]), 3),
            "embed_documents_per_s_median": round(statistics.median(docs_per_s[name]), 1),
        }
        for name in embedders
    }
    fp32, int8 = results["fp32"], results["int8"]
    results["int8_over_fp32"] = {
        "query_latency": round(int8["embed_query_p50_ms"] / fp32["embed_query_p50_ms"], 3),
        "documents_per_s": round(
            int8["embed_documents_per_s_median"] / fp32["embed_documents_per_s_median"], 3
        ),
    }
    return results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    default_fp32 = os.environ.get("HYBRID_MEMORY_TEST_FP32_MODEL_PATH") or str(
        REPO.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
    )
    parser.add_argument("--fp32", type=Path, default=Path(default_fp32), help="the fp32 model directory")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--documents", type=int, default=400)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "embedding_models.json")
    args = parser.parse_args(argv)
    if not (args.fp32 / "model.onnx").is_file():
        parser.error(f"no fp32 model.onnx in {args.fp32}: pass --fp32 DIR")
    embedders = {
        "fp32": FastEmbedEmbedder(FP32_MODEL, args.fp32, threads=1),
        "int8": FastEmbedEmbedder(PACKAGED_MODEL, None, threads=1),
    }
    load_before = os.getloadavg()
    results = anyio.run(measure, embedders, args)
    results["model_bytes"] = {
        "fp32": (args.fp32 / "model.onnx").stat().st_size,
        "int8": (PACKAGED_MODEL_DIR / "model.onnx").stat().st_size,
    }
    results["load_average_before_after"] = [list(load_before), list(os.getloadavg())]
    results["cpus"] = os.cpu_count()
    results["settings"] = {"queries": args.queries, "documents": args.documents, "rounds": args.rounds}
    print(json.dumps(results, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"written to {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
