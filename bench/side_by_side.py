"""hybrid-memory and mcp-server-qdrant side by side over MCP stdio, on the same LongMemEval turns.

    python bench/side_by_side.py --qdrant-python VENV/bin/python [--sizes 1000 10000] [--queries 100]
                                 [--fastembed-cache DIR] [--out bench/results/side_by_side.json]

Both servers are driven by the real MCP client (``mcp.Client`` over stdio), one after the
other, each on a data directory of its own, with the same turns in the same order: the
turns of the LongMemEval dev sample (``/work/shared/datasets/longmemeval``), session by
session. hybrid-memory stores a session in one ``remember_thread`` call (the thread is
the session, each turn a message with its id and time); mcp-server-qdrant stores a turn a
``qdrant-store`` call, as its tool takes one text. Queries are the sample's questions,
through ``recall_memory`` and ``qdrant-find`` (ten results each, both servers' default).

mcp-server-qdrant runs from its own virtual environment (``--qdrant-python``: its python,
beside the ``mcp-server-qdrant`` script ``pip install mcp-server-qdrant`` put there) with a
local Qdrant (``QDRANT_LOCAL_PATH``) and its default model,
``sentence-transformers/all-MiniLM-L6-v2`` through fastembed, read from ``--fastembed-cache``
with ``HF_HUB_OFFLINE=1``: nothing is downloaded.

At each size (the store grows from one to the next), per server:

- ingest: turns per wall second, and the server's CPU (user + system, the process and
  its children) per turn;
- recall p50 / p95 over stdio, and the server's CPU per query: both servers up at once,
  each query sent to one then the other, so both are timed under the same load;
- peak RSS of the server while it ingested (VmHWM, summed over its processes);
- disk allocated under its data directory once the server has exited;
- reopen: spawn a new server on the same directory, until its first search is answered
  (the median of three, the servers alternating).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Iterator, Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from time import perf_counter
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from hybrid_memory.evaluation.locomo import percentile
from hybrid_memory.evaluation.longmemeval import Item, load_longmemeval
from scale import disk

REPO = Path(__file__).resolve().parents[1]
DATASET = Path("/work/shared/datasets/longmemeval/lme_s_dev100.json.gz")
PROJECT = "bench"
COLLECTION = "memories"
MODEL_DIR = Path("/work/shared/models/all-MiniLM-L6-v2-onnx")
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class Turn:
    session: str
    id: str
    role: str
    content: str
    created_at: datetime


def turns(items: Sequence[Item]) -> Iterator[Turn]:
    """Every non-empty turn of every item's haystack, session by session, each session once."""
    seen: set[str] = set()
    for item in items:
        for session in item.sessions:
            if session.id in seen:
                continue
            seen.add(session.id)
            for index, turn in enumerate(session.turns):
                if turn.content.strip():
                    yield Turn(
                        session.id, turn.id, turn.role, turn.content, session.date + timedelta(minutes=index)
                    )


def sessions(batch: Sequence[Turn]) -> list[list[Turn]]:
    """``batch`` cut where the session changes."""
    out: list[list[Turn]] = []
    for turn in batch:
        if out and out[-1][0].session == turn.session:
            out[-1].append(turn)
        else:
            out.append([turn])
    return out


def descendants(pid: int) -> list[int]:
    """``pid``'s children, their children, ... (not ``pid`` itself)."""
    found: list[int] = []
    todo = [pid]
    while todo:
        parent = todo.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                found.append(child)
                todo.append(child)
    return found


def server_pids() -> list[int]:
    """The server this process spawned, and what that server spawned."""
    return descendants(os.getpid())


def cpu_s(pids: Sequence[int]) -> float:
    """User + system CPU seconds of ``pids`` (children they waited for included)."""
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        total += sum(int(v) for v in fields[11:15])  # utime stime cutime cstime
    return total / CLOCK_TICKS


def peak_rss_mb(pids: Sequence[int]) -> float:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total / 1024


class Server:
    """How to start one of the two servers, store a batch of turns and search."""

    name: str
    search_tool: str

    def __init__(self, data: Path) -> None:
        self.data = data

    def params(self) -> StdioServerParameters:
        raise NotImplementedError

    async def store(self, client: Client, batch: Sequence[Turn]) -> None:
        raise NotImplementedError

    def search_args(self, query: str) -> dict[str, Any]:
        return {"query": query}


class HybridMemory(Server):
    name = "hybrid-memory"
    search_tool = "recall_memory"

    def params(self) -> StdioServerParameters:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env.update(HYBRID_MEMORY_DATA_DIR=str(self.data), HYBRID_MEMORY_PROJECT=PROJECT)
        return StdioServerParameters(command=sys.executable, args=["-m", "hybrid_memory", "serve"], env=env)

    async def store(self, client: Client, batch: Sequence[Turn]) -> None:
        for session in sessions(batch):
            messages = [
                {"role": t.role, "content": t.content, "id": t.id, "created_at": t.created_at.isoformat()}
                for t in session
            ]
            result = await client.call_tool(
                "remember_thread", {"thread_id": session[0].session, "messages": messages}
            )
            assert not result.is_error, result


class McpServerQdrant(Server):
    name = "mcp-server-qdrant"
    search_tool = "qdrant-find"

    def __init__(self, data: Path, python: Path, cache: Path) -> None:
        super().__init__(data)
        self.python, self.cache = python, cache

    def params(self) -> StdioServerParameters:
        env = dict(os.environ)
        env.update(
            QDRANT_LOCAL_PATH=str(self.data),
            COLLECTION_NAME=COLLECTION,
            FASTEMBED_CACHE_PATH=str(self.cache),
            HF_HUB_OFFLINE="1",
        )
        # Its console script: ``python -m mcp_server_qdrant.main`` defines main() but does not call it.
        return StdioServerParameters(command=str(self.python.parent / "mcp-server-qdrant"), env=env)

    async def store(self, client: Client, batch: Sequence[Turn]) -> None:
        for turn in batch:
            metadata = {"session": turn.session, "turn": turn.id, "role": turn.role}
            result = await client.call_tool(
                "qdrant-store", {"information": turn.content, "metadata": metadata}
            )
            assert not result.is_error, result


def fastembed_cache(cache: Path) -> Path:
    """fastembed's cache of its default model, made from the local ONNX export (nothing downloaded).

    fastembed reads ``sentence-transformers/all-MiniLM-L6-v2`` from the Hugging Face repository
    ``Qdrant/all-MiniLM-L6-v2-onnx``: a hub cache of that repository whose snapshot holds the
    export's files (``model.onnx`` and the tokenizer's four) is all it needs offline.
    """
    repo = cache / "models--Qdrant--all-MiniLM-L6-v2-onnx"
    revision = "0" * 40
    snapshot = repo / "snapshots" / revision
    snapshot.mkdir(parents=True, exist_ok=True)
    (repo / "refs").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(revision, encoding="ascii")
    for name in (
        "model.onnx",
        "config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "special_tokens_map.json",
    ):
        link = snapshot / name
        if not link.exists():
            link.symlink_to(MODEL_DIR / name)
    return cache


def summary_ms(seconds: Sequence[float]) -> dict[str, float]:
    return {
        "median_ms": statistics.median(seconds) * 1000,
        "p95_ms": percentile(seconds, 95) * 1000,
        "n": len(seconds),
    }


async def grow(server: Server, batch: Sequence[Turn], warm: str) -> dict[str, Any]:
    """One server process stores ``batch``: its rate, CPU and peak RSS."""
    async with Client(server.params()) as client:
        # Its model loaded and its store open before the clock starts (ours loads both after the handshake).
        await client.call_tool(server.search_tool, server.search_args(warm))
        pids = server_pids()
        cpu_before = cpu_s(pids)
        started = perf_counter()
        await server.store(client, batch)
        ingest_s = perf_counter() - started
        pids = server_pids()
        return {
            "ingest_turns_per_s": len(batch) / ingest_s,
            "ingest_cpu_ms_per_turn": (cpu_s(pids) - cpu_before) * 1000 / len(batch),
            "peak_rss_mb_while_ingesting": peak_rss_mb(pids),
        }


WARM_QUERIES = 5


async def recall_both(servers: Sequence[Server], queries: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Both servers up at once, the queries sent to one then the other (the order swapped each
    query), so both are timed under the same load: p50 / p95 and the server's CPU per query."""
    async with AsyncExitStack() as stack:
        clients, pids = [], []
        for server in servers:
            before = set(server_pids())
            clients.append(await stack.enter_async_context(Client(server.params())))
            pids.append(sorted(set(server_pids()) - before))
        for client, server in zip(clients, servers, strict=True):
            for query in queries[:WARM_QUERIES]:
                await client.call_tool(server.search_tool, server.search_args(query))
        seconds: list[list[float]] = [[] for _ in servers]
        cpu = [0.0 for _ in servers]
        for n, query in enumerate(queries):
            order = range(len(servers)) if n % 2 == 0 else reversed(range(len(servers)))
            for i in order:
                server, client = servers[i], clients[i]
                cpu_before, began = cpu_s(pids[i]), perf_counter()
                result = await client.call_tool(server.search_tool, server.search_args(query))
                seconds[i].append(perf_counter() - began)
                cpu[i] += cpu_s(pids[i]) - cpu_before
                assert not result.is_error, result
    return {
        server.name: {
            "recall": summary_ms(seconds[i]),
            "recall_cpu_ms_per_query": cpu[i] * 1000 / len(queries),
        }
        for i, server in enumerate(servers)
    }


REOPENS = 3


async def reopen(server: Server, query: str) -> float:
    """Spawn → the first search answered, on the store as the last server left it."""
    started = perf_counter()
    async with Client(server.params()) as client:
        result = await client.call_tool(server.search_tool, server.search_args(query))
        elapsed = perf_counter() - started
        assert not result.is_error, result
    return elapsed


async def bench(
    sizes: Sequence[int], n_queries: int, qdrant_python: Path, cache: Path, work: Path
) -> dict[str, Any]:
    items = load_longmemeval(DATASET)
    corpus = list(turns(items))
    if max(sizes) > len(corpus):
        raise SystemExit(f"the dataset has {len(corpus)} turns; ask for at most that many")
    queries = [item.question for item in items][:n_queries]
    servers: list[Server] = [
        HybridMemory(work / "hybrid-memory"),
        McpServerQdrant(work / "mcp-server-qdrant", qdrant_python, fastembed_cache(cache)),
    ]
    stages: list[dict[str, Any]] = []
    done = 0
    for size in sizes:
        rows: dict[str, dict[str, Any]] = {}
        for server in servers:
            server.data.mkdir(parents=True, exist_ok=True)
            rows[server.name] = {"stored": size, **await grow(server, corpus[done:size], queries[0])}
            rows[server.name]["disk_allocated_mb"] = disk(server.data)["allocated_mb"]
        for name, found in (await recall_both(servers, queries)).items():
            rows[name].update(found)
        reopens: dict[str, list[float]] = {server.name: [] for server in servers}
        for _ in range(REOPENS):  # alternating, as the recalls
            for server in servers:
                reopens[server.name].append(await reopen(server, queries[0]))
        for server in servers:
            rows[server.name]["reopen_to_first_search_s"] = statistics.median(reopens[server.name])
            rows[server.name]["load"] = os.getloadavg()[0]
            print(f"{size:>6} {server.name}: {json.dumps(rows[server.name])}", file=sys.stderr, flush=True)
        stages.append({"size": size, **rows})
        done = size
    return {
        "benchmark": "side_by_side",
        "generated_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "dataset": DATASET.name,
        "queries": len(queries),
        "load_average": os.getloadavg(),
        "stages": stages,
    }


def table(report: dict[str, Any]) -> str:
    """One column per size and server, then ours over theirs."""
    ours, theirs = HybridMemory.name, McpServerQdrant.name
    rows: list[tuple[str, str, bool]] = [
        ("recall p50 over stdio (ms)", "recall.median_ms", False),
        ("recall p95 over stdio (ms)", "recall.p95_ms", False),
        ("server CPU per query (ms)", "recall_cpu_ms_per_query", False),
        ("ingest (turns/s)", "ingest_turns_per_s", True),
        ("server CPU per turn stored (ms)", "ingest_cpu_ms_per_turn", False),
        ("peak RSS while ingesting (MB)", "peak_rss_mb_while_ingesting", False),
        ("disk allocated (MB)", "disk_allocated_mb", False),
        ("reopen -> first search (s)", "reopen_to_first_search_s", False),
    ]

    def get(row: dict[str, Any], path: str) -> float:
        value: Any = row
        for key in path.split("."):
            value = value[key]
        return float(value)

    head = "| | " + " | ".join(f"{s['size']:,}: ours | theirs | ours/theirs" for s in report["stages"]) + " |"
    lines = [head, "|---|" + "---|---|---|" * len(report["stages"])]
    for name, path, _higher_better in rows:
        cells = []
        for s in report["stages"]:
            a, b = get(s[ours], path), get(s[theirs], path)
            cells.append(f"{a:,.2f} | {b:,.2f} | {a / b:.2f}x" if b else f"{a:,.2f} | {b:,.2f} | -")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    loads = ", ".join(f"{s[ours]['load']:.1f} / {s[theirs]['load']:.1f}" for s in report["stages"])
    lines.append(f"\nLoad average at the end of each stage (ours / theirs): {loads}.")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--qdrant-python", type=Path, required=True, help="python of mcp-server-qdrant's venv"
    )
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument(
        "--fastembed-cache", type=Path, default=Path.home() / ".cache" / "hybrid-memory-bench-fastembed"
    )
    parser.add_argument(
        "--work", type=Path, help="where both stores grow (a new temporary directory by default)"
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "side_by_side.json")
    args = parser.parse_args(argv)
    import tempfile

    with tempfile.TemporaryDirectory(prefix="side-by-side-") as tmp:
        work = args.work or Path(tmp)
        report = anyio.run(
            bench, sorted(args.sizes), args.queries, args.qdrant_python, args.fastembed_cache, work
        )
    print(table(report))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(f"written to {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
