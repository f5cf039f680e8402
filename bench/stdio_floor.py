"""Recall over stdio against its floor: an SDK server that only embeds the query, in the same run.

    python bench/stdio_floor.py [--store DIR] [--queries 200] [--rounds 2]

This bench measures what any server written with the MCP Python SDK and this embedding model
pays before it searches anything: the *floor server* below is ``MCPServer`` with one
tool, ``recall_memory(query)``, which embeds the query with the packaged model (the
same ``build_embedder`` as ours) and returns a fixed text of a recall's size. The two
servers alternate, each started once a round with the same client (``mcp.Client``
over stdio, the one ``bench/scale.py --stdio`` uses), 20 warm-up calls, then every
query timed. Printed per server and round: p50 / p95 wall time, the client's CPU a
call, the answer's text size, and the server's memory after the round (resident,
anonymous and file-backed, and its peak); then the machine's load.

``--store`` is a data directory whose project ``bench`` holds the memories, e.g. the
10k store ``bench/recall_stages.py`` fills and keeps (its default directory is this
bench's default too); an empty or missing one still runs, against nothing.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from time import perf_counter, process_time
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from latency import QUERIES, SEED, _fill
from scale import proc_status

ANSWER_CHARS = 600
"""The floor server's answer: about the text of a five-hit recall."""

FLOOR_SERVER = f"""
from mcp.server.mcpserver import MCPServer

from hybrid_memory.embeddings import build_embedder
from hybrid_memory.settings import load_settings

server = MCPServer("floor")
embedder = build_embedder(load_settings().embedding)


@server.tool()
async def recall_memory(query: str) -> str:
    \"\"\"Embed the query; answer with a fixed text.\"\"\"
    vector = await embedder.embed_query(query)
    return f"{{vector[0]:.3f}} " + "x" * {ANSWER_CHARS}


server.run("stdio")
"""

WARM_UP = 20


def child_pid(marker: str) -> int:
    """The newest process of ours whose command line holds ``marker``."""
    found = subprocess.run(["pgrep", "-n", "-f", marker], capture_output=True, text=True, check=True)
    return int(found.stdout.split()[0])


async def one_round(args: list[str], marker: str, env: dict[str, str], queries: list[str]) -> dict[str, Any]:
    params = StdioServerParameters(command=sys.executable, args=args, env=env)
    async with Client(params) as client:
        for query in queries[:WARM_UP]:
            await client.call_tool("recall_memory", {"query": query})
        seconds: list[float] = []
        chars = 0
        cpu_before = process_time()
        for query in queries:
            began = perf_counter()
            result = await client.call_tool("recall_memory", {"query": query})
            seconds.append(perf_counter() - began)
            if result.is_error:
                raise RuntimeError(f"recall_memory failed: {result.content}")
            chars += sum(len(getattr(block, "text", "")) for block in result.content)
        client_cpu = (process_time() - cpu_before) / len(queries)
        memory = proc_status(child_pid(marker))
    return {
        "p50_ms": statistics.median(seconds) * 1000,
        "p95_ms": statistics.quantiles(seconds, n=20)[-1] * 1000,
        "client_cpu_ms": client_cpu * 1000,
        "text_chars": chars / len(queries),
        "memory_mb": memory,
    }


async def bench(store: Path, n_queries: int, rounds: int) -> None:
    rng = random.Random(SEED)
    queries = [_fill(rng.choice(QUERIES), rng) for _ in range(n_queries)]
    env = {**os.environ, "HYBRID_MEMORY_DATA_DIR": str(store), "HYBRID_MEMORY_PROJECT": "bench"}
    with tempfile.TemporaryDirectory() as scratch:
        floor_script = Path(scratch) / "floor_server.py"
        floor_script.write_text(FLOOR_SERVER)
        servers = {
            "floor server (embed only)": ([str(floor_script)], str(floor_script)),
            "hybrid-memory": (["-m", "hybrid_memory", "serve"], "hybrid_memory serve"),
        }
        load_before = os.getloadavg()
        for round_ in range(rounds):
            for name, (args, marker) in servers.items():
                r = await one_round(args, marker, env, queries)
                m = r["memory_mb"]
                print(
                    f"round {round_} {name:<26} p50 {r['p50_ms']:6.2f} ms  p95 {r['p95_ms']:6.2f} ms  "
                    f"client CPU {r['client_cpu_ms']:.2f} ms/call  text {r['text_chars']:.0f} chars  "
                    f"RSS {m['VmRSS']:.0f} MB (anon {m['RssAnon']:.0f} + file {m['RssFile']:.0f}), "
                    f"peak {m['VmHWM']:.0f} MB",
                    flush=True,
                )
    print("load average (1, 5, 15 min): before", load_before, "after", os.getloadavg())


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", type=Path, default=Path("/tmp/hybrid-memory-recall-stages"))
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args(argv)
    anyio.run(bench, args.store, args.queries, args.rounds)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
