"""One HTTP server, 1 client then 8 clients, a 70/20/10 recall / remember / note mix, in one run.

    nice python bench/concurrency.py [--calls 150] [--clients 8] [--seed-threads 40] \
        [--out bench/results/concurrency.json]

The server is ``hybrid-memory serve --transport http`` as a child process (embedded
stores, the packaged model or HYBRID_MEMORY_EMBEDDING_MODEL_PATH), seeded with
``--seed-threads`` threads of 10 messages. Then the same per-client call list runs
with one client, and with ``--clients`` clients at once. Reported: calls/s, p50/p99
latency, the server's CPU seconds over each phase (and its event loop's per call), the
clients' CPU seconds, the load average, and the ceiling on the speed-up that the
machine's cores set: cores / the cores one client keeps busy.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from pathlib import Path
from tempfile import TemporaryDirectory
from time import perf_counter
from typing import Any

import anyio
from mcp import Client

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.servers import http_server  # noqa: E402

from hybrid_memory.evaluation.locomo import percentile  # noqa: E402

WORDS = [
    *("lighthouse", "harbour", "budget", "kiln", "sourdough", "chess", "opening", "Kraków", "garden"),
    *("river", "invoice", "deadline", "migration", "database", "backup", "concert", "ticket", "recipe"),
    *("ferry", "museum", "contract"),
]


def sentence(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "."


def call_list(client_no: int, calls: int) -> list[tuple[str, dict[str, Any]]]:
    rng = random.Random(client_no)
    out: list[tuple[str, dict[str, Any]]] = []
    for k in range(calls):
        roll = rng.random()
        if roll < 0.7:
            out.append(("recall_memory", {"query": sentence(rng), "limit": 5}))
        elif roll < 0.9:
            messages = [{"role": "user", "id": f"c{client_no}-{k}", "content": sentence(rng)}]
            out.append(("remember_thread", {"thread_id": f"bench-{client_no}", "messages": messages}))
        else:
            out.append(("create_note", {"content": sentence(rng), "type": "fact", "force": True}))
    return out


async def run_client(url: str, calls: list[tuple[str, dict[str, Any]]], latencies: list[float]) -> int:
    errors = 0
    async with Client(url) as client:
        for tool, arguments in calls:
            started = perf_counter()
            result = await client.call_tool(tool, arguments)
            latencies.append(perf_counter() - started)
            errors += result.is_error
    return errors


def server_cpu_s(pid: int, task: int | None = None) -> float:
    stat = Path(f"/proc/{pid}/stat") if task is None else Path(f"/proc/{pid}/task/{task}/stat")
    fields = stat.read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def loop_cpu_s(pid: int) -> float:
    """CPU seconds of the server's main thread: the event loop, where Python work not in a thread runs."""
    return server_cpu_s(pid, task=pid)


def client_cpu_s() -> float:
    """CPU seconds of this process (the clients), which share the machine's cores with the server."""
    times = os.times()
    return times.user + times.system


async def phase(url: str, pid: int, clients: int, calls: int, offset: int) -> dict[str, Any]:
    latencies: list[float] = []
    errors: list[int] = []
    print(f"phase start: {clients} client(s)", file=sys.stderr, flush=True)  # for profilers to attach
    cpu_before, loop_before, client_before = server_cpu_s(pid), loop_cpu_s(pid), client_cpu_s()
    started = perf_counter()

    async def one(i: int) -> None:
        errors.append(await run_client(url, call_list(offset + i, calls), latencies))

    async with anyio.create_task_group() as tg:
        for i in range(clients):
            tg.start_soon(one, i)
    wall = perf_counter() - started
    print(f"phase end: {clients} client(s)", file=sys.stderr, flush=True)
    latencies.sort()
    return {
        "clients": clients,
        "calls": clients * calls,
        "errors": sum(errors),
        "wall_s": round(wall, 2),
        "calls_per_s": round(clients * calls / wall, 1),
        "p50_ms": round(1000 * percentile(latencies, 50), 1),
        "p99_ms": round(1000 * percentile(latencies, 99), 1),
        "server_cpu_s": round(server_cpu_s(pid) - cpu_before, 2),
        "server_cpu_ms_per_call": round(1000 * (server_cpu_s(pid) - cpu_before) / (clients * calls), 1),
        "loop_cpu_ms_per_call": round(1000 * (loop_cpu_s(pid) - loop_before) / (clients * calls), 1),
        "client_cpu_s": round(client_cpu_s() - client_before, 2),
        "load_average": [round(x, 2) for x in os.getloadavg()],
    }


async def main(calls: int, clients: int, seed_threads: int, url: str, pid: int) -> dict[str, Any]:
    rng = random.Random(0)
    async with Client(url) as client:
        for t in range(seed_threads):
            messages = [{"role": "user", "id": f"s{i}", "content": sentence(rng)} for i in range(10)]
            await client.call_tool("remember_thread", {"thread_id": f"seed-{t}", "messages": messages})
    one = await phase(url, pid, 1, calls, offset=100)
    many = await phase(url, pid, clients, calls, offset=200)
    speedup = round(many["calls_per_s"] / one["calls_per_s"], 2)
    # One client keeps this many cores busy (server and client CPU over wall time). Unless a call
    # costs less CPU under concurrency, more clients can go at most cores / busy times as fast.
    busy = (one["server_cpu_s"] + one["client_cpu_s"]) / one["wall_s"]
    cores = os.cpu_count() or 1
    return {
        "one_client": one,
        "many_clients": many,
        "speedup": speedup,
        "cores": cores,
        "cores_busy_one_client": round(busy, 2),
        "speedup_ceiling": round(cores / busy, 2),
    }


def server_pid(port: int) -> int:
    """The child serving ``port`` (the only hybrid_memory serve child of this process)."""
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cmdline = (entry / "cmdline").read_bytes().split(b"\0")
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError):
                continue
            if parent == os.getpid() and str(port).encode() in cmdline:
                return int(entry.name)
    raise RuntimeError("server process not found")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=150, help="calls per client in each phase")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seed-threads", type=int, default=40)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    with TemporaryDirectory() as tmp, http_server(Path(tmp) / "data") as server:
        pid = server_pid(server.port)
        result = anyio.run(main, args.calls, args.clients, args.seed_threads, server.url, pid)
    report = json.dumps(result, indent=2)
    print(report)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report + "\n", encoding="utf-8")
