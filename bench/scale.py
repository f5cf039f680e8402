"""Recall latency, memory, disk and reopen time as the store grows, in-process, embedded stores.

    python bench/scale.py [--sizes 1000 10000 100000] [--documents model|hash] [--queries 200]
                          [--stdio] [--keep DIR | --reuse DIR] [--out bench/results/scale.json]

The corpus is the synthetic chat of ``bench/latency.py`` (threads of 20 turns, seeded),
stored through ``remember_thread``. Queries are always embedded by the real model, so
the recall floor (``embed_query`` + one dense search on the store) is what a user pays.

``--documents model`` embeds the stored turns with the real model too (what a user
pays). ``--documents hash`` embeds them with a cheap deterministic stand-in
(a sum of per-word random unit vectors, same dimension and model name), so the store
can be grown to 100k in minutes: the store's own cost curve (search, RSS, disk,
reopen) does not depend on what the vectors mean; ranking quality does, and is not
measured here.

At each size, after the store has been indexed (``optimize``, as the background
thread does when the store is idle):

- ingest: messages per wall second and per CPU second of this process (all threads;
  a figure for one dedicated core on a machine shared with other work);
- recall p50 / p95 through ``MemoryService.recall`` and the floor measured in the same
  run, and their ratio;
- RSS now and peak (VmRSS, VmHWM of this process);
- disk: apparent size and allocated blocks of the data directory (the store's
  files are sparse and preallocated);
- reopen: close both stores, open them again, first recall (model already loaded);
- with ``--stdio``: while the stores are closed, ``hybrid-memory serve`` over stdio on
  the same data dir, driven by the real MCP client: spawn → initialized, spawn → first
  recall answered (the model loads in that process), then recall p50 / p95 of the same
  queries as ``recall_memory`` calls (the default limit of 10).

``--keep DIR`` grows the store in ``DIR`` (which must not hold one yet) and leaves it there, to
measure recall on it again later (``hybrid-memory serve`` with ``HYBRID_MEMORY_DATA_DIR=DIR``
and ``HYBRID_MEMORY_PROJECT=bench``); without it the store is made in a temporary directory
and removed at the end. ``--reuse DIR`` measures such a store: as it is (one column), or grown
on to each of ``--sizes`` above what it holds; its peak RSS is then that of opening, growing,
optimizing and recalling in this run, not of the ingest that made the store.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import tempfile
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager, AsyncExitStack, nullcontext
from datetime import UTC, datetime
from pathlib import Path
from time import perf_counter
from typing import Any

import anyio
import numpy as np
from mcp import Client, StdioServerParameters

from hybrid_memory.backends import open_graph_store, open_vector_store
from hybrid_memory.embeddings import build_embedder
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.errors import BackendUnavailableError
from hybrid_memory.models import MemoryFilter, Scope
from hybrid_memory.service import MemoryService, RecallOptions, ThreadDraft
from hybrid_memory.settings import Settings, load_settings
from latency import QUERIES, SEED, _fill, measure_recall, summary, synthetic_thread

REPO = Path(__file__).resolve().parents[1]
SCOPE = Scope(project="bench")


class HashDocuments:
    """The real embedder for queries; documents as sums of per-word random unit vectors."""

    def __init__(self, real: Embedder) -> None:
        self._real = real
        self._words: dict[str, np.ndarray] = {}

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def _word(self, word: str) -> np.ndarray:
        vector = self._words.get(word)
        if vector is None:
            seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            vector = np.random.default_rng(seed).standard_normal(self._real.dimension)
            self._words[word] = vector
        return vector

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            total = sum((self._word(w) for w in text.lower().split()), np.zeros(self._real.dimension))
            out.append((total / (np.linalg.norm(total) or 1.0)).tolist())
        return out


def proc_status(pid: int | str = "self") -> dict[str, float]:
    """VmRSS, VmHWM and the resident split (anonymous / file-backed maps) of a process (this one), in MB."""
    found: dict[str, float] = {}
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            key, _, value = line.partition(":")
            if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                found[key] = int(value.split()[0]) / 1024
    return found


def disk(path: Path) -> dict[str, float]:
    """Apparent size and allocated blocks under ``path``, in MB."""
    apparent = allocated = 0
    for root, _, files in os.walk(path):
        for name in files:
            st = os.stat(os.path.join(root, name))
            apparent += st.st_size
            allocated += st.st_blocks * 512
    return {"apparent_mb": apparent / 2**20, "allocated_mb": allocated / 2**20}


class Stores:
    """Both stores and the service over them, closed and reopened on demand."""

    def __init__(self, settings: Settings, embedder: Any) -> None:
        self.settings, self.embedder = settings, embedder
        self._stack: AsyncExitStack | None = None
        self.vectors: Any = None
        self.service: MemoryService | None = None

    async def open(self) -> MemoryService:
        stack = AsyncExitStack()
        e = self.embedder
        self.vectors = await stack.enter_async_context(
            open_vector_store(self.settings, dimension=e.dimension, model=e.model_name)
        )
        graph = await stack.enter_async_context(open_graph_store(self.settings))
        self._stack = stack
        self.service = MemoryService(settings=self.settings, vectors=self.vectors, graph=graph, embedder=e)
        return self.service

    async def close(self) -> None:
        if self._stack is not None:
            await self._stack.aclose()
            self._stack = None


RETRIES = 5
"""Times a thread is sent again after the store said it was busy building its index."""
PROGRESS_EVERY = 50_000
"""Memories between two progress lines on stderr while a store grows."""


async def grow(
    service: MemoryService, rng: random.Random, threads: int, stored: int, size: int
) -> dict[str, Any]:
    """Remember threads until ``size`` memories are stored; the rate per wall and CPU second.

    Every ``PROGRESS_EVERY`` memories a line on stderr: how far, how fast, the RSS.
    """
    wall = cpu = 0.0
    before = stored
    retries = 0
    began = perf_counter()
    next_line = (stored // PROGRESS_EVERY + 1) * PROGRESS_EVERY
    while stored < size:
        if stored >= next_line:
            next_line += PROGRESS_EVERY
            m = proc_status()
            print(
                f"{stored:>9,} stored | {(stored - before) / (perf_counter() - began):.0f} msg/s since "
                f"{before:,} | RSS {m['VmRSS']:.0f} MB (anon {m['RssAnon']:.0f}), peak {m['VmHWM']:.0f} MB "
                f"| load {os.getloadavg()[0]:.1f}",
                file=sys.stderr,
                flush=True,
            )
        draft = ThreadDraft(f"thread-{threads}", synthetic_thread(rng, threads))
        started, started_cpu = perf_counter(), time.process_time()
        for attempt in range(RETRIES + 1):
            try:
                result = await service.remember_thread(SCOPE, draft)
                break
            except BackendUnavailableError:  # waited past the timeout behind an index build
                if attempt == RETRIES:
                    raise
                retries += 1  # again, as a client would: idempotent per message
        wall += perf_counter() - started
        cpu += time.process_time() - started_cpu
        stored += result.chunks
        threads += 1
    added = stored - before
    return {
        "threads": threads,
        "stored": stored,
        "messages": added,
        "messages_per_s": added / wall if wall else 0.0,
        "messages_per_cpu_s": added / cpu if cpu else 0.0,
        "retries": retries,
    }


async def stdio_recall(data: Path, queries: Sequence[str]) -> dict[str, Any]:
    """Recall through ``hybrid-memory serve`` over stdio on ``data``: start-up, then per-call latency."""
    # The server runs as installed: from compiled modules (a development shell may turn their writing off).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HYBRID_MEMORY_DATA_DIR=str(data), HYBRID_MEMORY_PROJECT=SCOPE.project)
    params = StdioServerParameters(command=sys.executable, args=["-m", "hybrid_memory", "serve"], env=env)
    started = perf_counter()
    async with Client(params) as client:
        initialized_s = perf_counter() - started
        await client.call_tool("recall_memory", {"query": queries[0]})
        first_s = perf_counter() - started
        seconds = []
        for query in queries:
            began = perf_counter()
            result = await client.call_tool("recall_memory", {"query": query})
            seconds.append(perf_counter() - began)
            assert not result.is_error, result
    return {
        "spawn_to_initialized_s": initialized_s,
        "spawn_to_first_recall_s": first_s,
        **summary(seconds),
    }


def data_dir(keep: Path | None) -> AbstractContextManager[str]:
    """Where the store grows: ``keep`` (made empty, left afterwards) or a temporary directory."""
    if keep is None:
        return tempfile.TemporaryDirectory(prefix="hybrid-memory-scale-")
    if keep.exists() and any(keep.iterdir()):
        raise SystemExit(f"--keep {keep}: the directory is not empty; name a new or an empty one.")
    keep.mkdir(parents=True, exist_ok=True)
    return nullcontext(str(keep))


async def bench(
    sizes: Sequence[int],
    documents: str,
    n_queries: int,
    stdio: bool = False,
    keep: Path | None = None,
    reuse: Path | None = None,
) -> dict[str, Any]:
    rng = random.Random(SEED)
    queries = [_fill(rng.choice(QUERIES), rng) for _ in range(n_queries)]
    stages: list[dict[str, Any]] = []
    with nullcontext(str(reuse)) if reuse is not None else data_dir(keep) as tmp:
        data = Path(tmp)
        settings = load_settings(
            data_dir=data, project="bench", vector_backend="edge", graph_backend="sqlite"
        )
        # Before anything else loads here: the server's start on an empty store.
        empty = None
        if stdio:
            with tempfile.TemporaryDirectory(prefix="hybrid-memory-empty-") as nothing:
                empty = await stdio_recall(Path(nothing), queries[:1])
        real = build_embedder(settings.embedding)
        await real.embed_query("load the model")
        embedder: Any = HashDocuments(real) if documents == "hash" else real
        stores = Stores(settings, embedder)
        service = await stores.open()
        threads = stored = 0
        if reuse is not None:  # the store as it is, then grown on to the sizes above it
            stored = await stores.vectors.count(MemoryFilter(scope=SCOPE))
            threads = stored  # past every thread it holds (each holds one memory or more)
            sizes = [stored, *(size for size in sizes if size > stored)]
        try:
            for size in sizes:
                ingest = await grow(service, rng, threads, stored, size)
                threads, stored = ingest["threads"], ingest["stored"]
                started = perf_counter()
                await stores.vectors.optimize()
                optimize_s = perf_counter() - started
                recall = await measure_recall(service, stores.vectors, real, SCOPE, queries)
                memories = await stores.vectors.count(MemoryFilter(scope=SCOPE))
                await stores.close()
                over_stdio = await stdio_recall(data, queries) if stdio else None
                started = perf_counter()
                service = await stores.open()
                await service.recall(SCOPE, queries[0], RecallOptions(limit=10))
                reopen_s = perf_counter() - started
                stage = {
                    "memories": memories,
                    "ingest": ingest,
                    "optimize_s": optimize_s,
                    "recall": recall,
                    "reopen_to_first_recall_s": reopen_s,
                    "stdio": over_stdio,
                    "rss_mb": proc_status(),
                    "disk": disk(data),
                    "load": os.getloadavg()[0],
                }
                stages.append(stage)
                print_stage(stage, file=sys.stderr)
        finally:
            await stores.close()
            await real.close()
    return {
        "benchmark": "scale",
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "model": real.model_name,
        "documents": documents,
        "queries": n_queries,
        "load_average": os.getloadavg(),
        "empty_store_stdio": empty,
        "stages": stages,
    }


def table(report: dict[str, Any]) -> str:
    """The stages side by side as a Markdown table, one column a size."""
    stages = report["stages"]
    rows: list[tuple[str, Any]] = [
        ("recall p50, in process (ms)", lambda s: f"{s['recall']['recall']['median_ms']:.1f}"),
        ("floor: embed + dense search (ms)", lambda s: f"{s['recall']['embed_plus_dense']['median_ms']:.1f}"),
        ("recall / floor", lambda s: f"{s['recall']['recall_over_floor']:.2f}x"),
        ("recall p50 over stdio (ms)", lambda s: f"{s['stdio']['median_ms']:.1f}" if s["stdio"] else "-"),
        (
            "spawn -> first recall over stdio (s)",
            lambda s: f"{s['stdio']['spawn_to_first_recall_s']:.2f}" if s["stdio"] else "-",
        ),
        ("peak RSS (MB)", lambda s: f"{s['rss_mb']['VmHWM']:,.0f}"),
        ("RSS serving, after reopening (MB)", lambda s: f"{s['rss_mb']['VmRSS']:,.0f}"),
        ("disk allocated (MB)", lambda s: f"{s['disk']['allocated_mb']:,.1f}"),
        ("disk per memory (KB)", lambda s: f"{s['disk']['allocated_mb'] * 1024 / s['memories']:.2f}"),
        ("reopen -> first recall (s)", lambda s: f"{s['reopen_to_first_recall_s']:.2f}"),
        ("optimize after ingest (s)", lambda s: f"{s['optimize_s']:.1f}"),
        (
            "ingest (messages/s)",
            lambda s: f"{s['ingest']['messages_per_s']:,.0f}" if s["ingest"]["messages"] else "-",
        ),
        ("load average at the end", lambda s: f"{s['load']:.1f}"),
    ]
    lines = [
        "| | " + " | ".join(f"{s['memories']:,}" for s in stages) + " |",
        "|---|" + "---|" * len(stages),
    ]
    lines += [f"| {name} | " + " | ".join(cell(s) for s in stages) + " |" for name, cell in rows]
    if report.get("empty_store_stdio"):
        first = report["empty_store_stdio"]["spawn_to_first_recall_s"]
        lines.append(f"\nEmpty store: spawn -> first recall {first:.2f} s.")
    return "\n".join(lines)


def print_stage(stage: dict[str, Any], file: Any = sys.stdout) -> None:
    r, i, m, d = stage["recall"], stage["ingest"], stage["rss_mb"], stage["disk"]
    print(
        f"{stage['memories']:>7} memories | recall p50 {r['recall']['median_ms']:.1f} ms "
        f"(p95 {r['recall']['p95_ms']:.1f}); floor {r['embed_plus_dense']['median_ms']:.1f} ms "
        f"(embed {r['embed_query']['median_ms']:.1f} + dense {r['dense_search']['median_ms']:.2f}); "
        f"ratio {r['recall_over_floor']:.2f}x | ingest {i['messages_per_s']:.0f} msg/s wall, "
        f"{i['messages_per_cpu_s']:.0f} msg/CPU-s | RSS {m['VmRSS']:.0f} MB (anon {m['RssAnon']:.0f}, "
        f"file {m['RssFile']:.0f}), peak {m['VmHWM']:.0f} MB | "
        f"disk {d['apparent_mb']:.0f} MB apparent, {d['allocated_mb']:.1f} MB allocated | "
        f"reopen -> first recall {stage['reopen_to_first_recall_s']:.2f} s | "
        f"optimize {stage['optimize_s']:.1f} s | load {os.getloadavg()[0]:.1f}",
        file=file,
    )
    if stage.get("stdio"):
        o = stage["stdio"]
        print(
            f"{stage['memories']:>7} memories over stdio | recall p50 {o['median_ms']:.1f} ms "
            f"(p95 {o['p95_ms']:.1f}) | spawn -> initialized {o['spawn_to_initialized_s']:.2f} s, "
            f"-> first recall {o['spawn_to_first_recall_s']:.2f} s | load {os.getloadavg()[0]:.1f}",
            file=file,
        )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", type=int, nargs="+", help="default 1000 10000 100000; none with --reuse")
    parser.add_argument("--documents", choices=("model", "hash"), default="model")
    parser.add_argument("--queries", type=int, default=200, help="recall queries per stage")
    parser.add_argument("--stdio", action="store_true", help="also recall through the server over stdio")
    kept = parser.add_mutually_exclusive_group()
    kept.add_argument("--keep", type=Path, help="grow the store in this new directory and leave it there")
    kept.add_argument(
        "--reuse", type=Path, help="measure the store --keep left in this directory (grown on to --sizes)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "scale.json")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([] if args.reuse else [1_000, 10_000, 100_000])
    report = anyio.run(bench, sorted(sizes), args.documents, args.queries, args.stdio, args.keep, args.reuse)
    for stage in report["stages"]:
        print_stage(stage)
    print(table(report))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
