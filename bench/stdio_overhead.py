"""What a recall costs over stdio beyond the recall itself: the same queries in process, through the
MCP server in process, and through ``hybrid-memory serve`` over stdio, in the same run.

    python bench/stdio_overhead.py [--size 1000] [--queries 100] [--rounds 2] [--py-spy FILE]

A store of ``--size`` memories (the synthetic chat of ``bench/latency.py``, documents embedded as
``bench/scale.py --documents hash`` does; queries by the real model) is filled once. Then, each
round, the queries go:

- **in process**: ``MemoryService.recall`` with the options ``recall_memory`` uses by default;
- **MCP in process**: ``recall_memory`` through our server built in this process and the SDK's
  client over its in-memory transport (the SDK and our tool layer, no process boundary);
- **over stdio**: ``recall_memory`` through ``hybrid-memory serve`` spawned on the same data dir,
  driven by the real MCP client (``mcp.Client``), as ``bench/scale.py --stdio`` does.

Each after 20 warm-up calls. Printed per way: p50 / p95 wall time, the client's CPU a call and,
over stdio, the server's CPU a call (all its threads); the overhead is the difference of medians.
``--py-spy FILE`` records the stdio server while it answers (a collapsed-stack file, summarised).
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from time import perf_counter, process_time
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from hybrid_memory.embeddings import build_embedder
from hybrid_memory.server import build_server
from hybrid_memory.service import RecallOptions
from hybrid_memory.settings import load_settings
from latency import QUERIES, SEED, _fill, summary
from scale import SCOPE, HashDocuments, Stores, grow

WARM_UP = 20


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_pid() -> int:
    """The child of this process running ``hybrid_memory serve`` (the stdio client spawned it)."""
    children = Path(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read_text().split()
    for child in children:
        cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        if b"hybrid_memory" in cmdline and b"serve" in cmdline:
            return int(child)
    raise RuntimeError("no server child found")


async def timed(call: Callable[[str], Awaitable[Any]], queries: Sequence[str]) -> dict[str, Any]:
    for query in queries[:WARM_UP]:
        await call(query)
    seconds = []
    cpu = process_time()
    for query in queries:
        began = perf_counter()
        await call(query)
        seconds.append(perf_counter() - began)
    return {**summary(seconds), "client_cpu_ms": (process_time() - cpu) * 1000 / len(queries)}


async def over_stdio(data: Path, queries: Sequence[str], py_spy: Path | None) -> dict[str, Any]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env.update(HYBRID_MEMORY_DATA_DIR=str(data), HYBRID_MEMORY_PROJECT=SCOPE.project)
    params = StdioServerParameters(command=sys.executable, args=["-m", "hybrid_memory", "serve"], env=env)
    async with Client(params) as client:

        async def call(query: str) -> None:
            result = await client.call_tool("recall_memory", {"query": query})
            assert not result.is_error, result

        for query in queries[:WARM_UP]:
            await call(query)
        pid = server_pid()
        spy = None
        if py_spy is not None:
            record = [
                "py-spy",
                "record",
                "--pid",
                str(pid),
                "--format",
                "raw",
                "--rate",
                "500",
                "-o",
                str(py_spy),
            ]
            spy = subprocess.Popen(  # noqa: ASYNC220 - a recorder beside the server, not awaited
                record,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            await anyio.sleep(1.0)  # py-spy attaches
        before = cpu_seconds(pid)
        out = await timed(call, queries)
        out["server_cpu_ms"] = (cpu_seconds(pid) - before) * 1000 / (len(queries) + WARM_UP)
        if spy is not None:
            spy.send_signal(2)
            spy.wait(timeout=30)
    return out


def print_profile(path: Path, top: int = 40) -> None:
    """The functions most often on the stack (inclusive) and at its top (self), from py-spy's raw output."""
    inclusive: Counter[str] = Counter()
    own: Counter[str] = Counter()
    total = 0
    for line in path.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        n = int(count)
        total += n
        frames = stack.split(";")
        for frame in set(frames):
            inclusive[frame] += n
        own[frames[-1]] += n
    print(f"\npy-spy: {total} samples")
    print("inclusive:")
    for frame, n in inclusive.most_common(top):
        print(f"  {n / total:6.1%}  {frame}")
    print("self:")
    for frame, n in own.most_common(top):
        print(f"  {n / total:6.1%}  {frame}")


async def bench(size: int, n_queries: int, rounds: int, py_spy: Path | None) -> None:
    rng = random.Random(SEED)
    queries = [_fill(rng.choice(QUERIES), rng) for _ in range(n_queries)]
    with tempfile.TemporaryDirectory(prefix="hybrid-memory-overhead-") as tmp:
        data = Path(tmp)
        settings = load_settings(
            data_dir=data, project="bench", vector_backend="edge", graph_backend="sqlite"
        )
        real = build_embedder(settings.embedding)
        await real.embed_query("load the model")
        stores = Stores(settings, HashDocuments(real))
        service = await stores.open()
        await grow(service, rng, 0, 0, size)
        assert stores.vectors is not None
        await stores.vectors.optimize()
        options = RecallOptions(limit=5, context=True)
        results: dict[str, list[dict[str, Any]]] = {"in process": [], "MCP in process": [], "over stdio": []}
        load_before = os.getloadavg()
        for round_ in range(rounds):
            opened = await stores.open() if round_ else service

            async def direct(query: str, opened: Any = opened) -> None:
                await opened.recall(SCOPE, query, options)

            results["in process"].append(await timed(direct, queries))
            await stores.close()
            server = build_server(settings, real)
            async with Client(server) as client:

                async def mcp_call(query: str) -> None:
                    result = await client.call_tool("recall_memory", {"query": query})
                    assert not result.is_error, result

                results["MCP in process"].append(await timed(mcp_call, queries))
            spy = py_spy if round_ == rounds - 1 else None
            results["over stdio"].append(await over_stdio(data, queries, spy))
        load_after = os.getloadavg()
        await real.close()

    base = statistics.median(r["median_ms"] for r in results["in process"])
    print(f"{size:,} memories, {n_queries} queries x {rounds} rounds")
    for way, runs in results.items():
        for i, r in enumerate(runs):
            extra = f"  server CPU {r['server_cpu_ms']:.1f} ms" if "server_cpu_ms" in r else ""
            print(
                f"{way:<15} round {i + 1}: p50 {r['median_ms']:6.1f} ms  p95 {r['p95_ms']:6.1f} ms  "
                f"(+{r['median_ms'] - base:5.1f} ms)  client CPU {r['client_cpu_ms']:.1f} ms{extra}"
            )
    print("load average (1, 5, 15 min): before", load_before, "after", load_after)
    if py_spy is not None and py_spy.exists():  # noqa: ASYNC240 - after the measurements
        print_profile(py_spy)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=1_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--py-spy", type=Path, help="record the stdio server with py-spy into this file")
    args = parser.parse_args(argv)
    anyio.run(bench, args.size, args.queries, args.rounds, args.py_spy)
    return 0


if __name__ == "__main__":
    sys.exit(main())
