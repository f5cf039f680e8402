"""Spawn -> initialized: our server against a minimal one-tool SDK server, in the same run.

    python bench/handshake.py [--runs 15] [--out bench/results/handshake.json]
    python bench/handshake.py --first-recall [--runs 9] [--size 1000] [--against SRC]

With ``--first-recall``, our server alone, as a client that recalls at once would start it:
``initialize``, ``initialized``, a ``recall_memory`` call and ``tools/list`` (what ``mcp.Client``
sends after its first call, to check the result against the tool's output schema), on an
empty store and on one of ``--size`` memories (filled first as ``bench/scale.py --documents
hash`` fills it); medians of spawn -> initialized, -> first recall answered, -> tools listed,
and the server's CPU seconds by the first recall. ``--against SRC`` runs the same starts,
interleaved, with the package imported from ``SRC`` instead (the ``src`` directory of another
checkout, e.g. ``git archive main src | tar -x -C /tmp/main``): a change and its baseline
under the same load.

Each run starts the server as a child process over stdio with the same Python,
sends ``initialize``, waits for its answer, sends ``notifications/initialized`` and
stops the clock; the two servers alternate, so load on the machine falls on both.
The minimal server is written below: ``MCPServer`` with one tool, nothing else.
Prints the medians, their ratio and the machine's load averages.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from time import perf_counter

MINIMAL_SERVER = """
from mcp.server.mcpserver import MCPServer

server = MCPServer("minimal")


@server.tool()
def echo(text: str) -> str:
    \"\"\"Say it back.\"\"\"
    return text


server.run("stdio")
"""

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "handshake-bench", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
RECALL = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "recall_memory", "arguments": {"query": "what did we decide about the ferry"}},
}
LIST_TOOLS = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}


def cpu_seconds(pid: int) -> float:
    """User + system CPU a process has used so far, all its threads (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def end(proc: subprocess.Popen[bytes]) -> None:
    """Close the server's stdin (its client leaves) and wait for it to exit; kill it after 30 s."""
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def handshake(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Seconds from spawn to the client having sent ``initialized``, and the server's CPU seconds by then.

    CPU time barely moves with the machine's load, so it shows what wall time hides on a busy machine.
    """
    start = perf_counter()
    proc = subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None
    assert proc.stdout is not None
    try:
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        answer = json.loads(proc.stdout.readline())
        if "result" not in answer:
            raise RuntimeError(f"initialize failed: {answer}")
        cpu = cpu_seconds(proc.pid)
        proc.stdin.write((json.dumps(INITIALIZED) + "\n").encode())
        proc.stdin.flush()
        return perf_counter() - start, cpu
    finally:
        end(proc)


def first_recall(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """Seconds from spawn to initialized, to the first recall answered and to the tools listed; CPU seconds
    of the server by the first recall."""
    start = perf_counter()
    proc = subprocess.Popen(
        command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert proc.stdin is not None
    assert proc.stdout is not None

    def send(message: dict[str, object]) -> None:
        assert proc.stdin is not None
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    def answer() -> dict[str, object]:
        assert proc.stdout is not None
        reply: dict[str, object] = json.loads(proc.stdout.readline())
        if "result" not in reply:
            raise RuntimeError(f"request failed: {reply}")
        return reply

    try:
        send(INITIALIZE)
        answer()
        send(INITIALIZED)
        times = {"initialized_s": perf_counter() - start}
        send(RECALL)
        reply = answer()
        times["first_recall_s"] = perf_counter() - start
        times["cpu_s"] = cpu_seconds(proc.pid)
        result = reply["result"]
        assert isinstance(result, dict), result
        assert not result.get("isError"), result
        send(LIST_TOOLS)
        answer()
        times["tools_listed_s"] = perf_counter() - start
        return times
    finally:
        end(proc)


def fill(data_dir: Path, size: int) -> None:
    """``size`` memories of the synthetic chat in ``data_dir`` (project ``bench``), by ``bench/scale.py``."""
    code = (
        "import random, anyio\n"
        "from hybrid_memory.embeddings import build_embedder\n"
        "from hybrid_memory.settings import load_settings\n"
        "from latency import SEED\n"
        "from scale import HashDocuments, Stores, grow\n"
        "async def main():\n"
        f"    s = load_settings(data_dir={str(data_dir)!r}, project='bench')\n"
        "    real = build_embedder(s.embedding)\n"
        "    stores = Stores(s, HashDocuments(real))\n"
        f"    await grow(await stores.open(), random.Random(SEED), 0, 0, {size})\n"
        "    await stores.vectors.optimize()\n"
        "    await stores.close()\n"
        "    await real.close()\n"
        "anyio.run(main)\n"
    )
    bench = Path(__file__).resolve().parent
    subprocess.run([sys.executable, "-c", code], check=True, cwd=bench, stderr=subprocess.DEVNULL)


def first_recalls(runs: int, size: int, against: Path | None) -> int:
    ours = [sys.executable, "-m", "hybrid_memory", "serve"]
    # As installed: from compiled modules (a development shell may turn their writing off).
    base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as empty, tempfile.TemporaryDirectory() as filled:
        fill(Path(filled), size)
        stores = {"empty store": empty, f"{size:,} memories": filled}
        envs = {
            name: {**base, "HYBRID_MEMORY_DATA_DIR": path, "HYBRID_MEMORY_PROJECT": "bench"}
            for name, path in stores.items()
        }
        if against is not None:
            for name in stores:
                envs[f"{name} ({against})"] = {**envs[name], "PYTHONPATH": str(against.resolve())}
        for env in envs.values():
            first_recall(ours, env)  # compiles what is not yet, creates the empty store; not counted
        load_before = os.getloadavg()
        found: dict[str, list[dict[str, float]]] = {name: [] for name in envs}
        for _ in range(runs):
            for name, env in envs.items():
                found[name].append(first_recall(ours, env))
        load_after = os.getloadavg()
    for name, runs_ in found.items():
        medians = {key: statistics.median(r[key] for r in runs_) for key in runs_[0]}
        print(
            f"{name:<16}\n    spawn -> initialized {medians['initialized_s'] * 1000:5.0f} ms, "
            f"-> first recall {medians['first_recall_s'] * 1000:5.0f} ms "
            f"(min {min(r['first_recall_s'] for r in runs_) * 1000:5.0f}), "
            f"-> tools listed {medians['tools_listed_s'] * 1000:5.0f} ms; "
            f"server CPU by the first recall {medians['cpu_s'] * 1000:5.0f} ms"
        )
    print(f"runs {runs} each, interleaved; load average (1, 5, 15 min):", load_before, "->", load_after)
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="handshakes per server (default 15)")
    parser.add_argument("--out", type=Path, help="also write the numbers as JSON here")
    parser.add_argument("--first-recall", action="store_true", help="spawn -> first recall, ours alone")
    parser.add_argument("--size", type=int, default=1000, help="memories in the filled store")
    parser.add_argument("--against", type=Path, help="also the package from this src dir")
    args = parser.parse_args(argv)
    if args.first_recall:
        return first_recalls(args.runs, args.size, args.against)

    with tempfile.TemporaryDirectory() as data_dir:
        env = {**os.environ, "HYBRID_MEMORY_DATA_DIR": data_dir, "HYBRID_MEMORY_PROJECT": "bench"}
        ours = [sys.executable, "-m", "hybrid_memory", "serve"]
        minimal = [sys.executable, "-c", MINIMAL_SERVER]
        handshake(ours, env)  # first start creates the stores; not counted
        load_before = os.getloadavg()
        servers = {"hybrid-memory": ours, "minimal SDK server": minimal}
        times: dict[str, list[float]] = {name: [] for name in servers}
        cpu: dict[str, list[float]] = {name: [] for name in servers}
        for _ in range(args.runs):
            for name, command in servers.items():
                wall, used = handshake(command, env)
                times[name].append(wall)
                cpu[name].append(used)
        load_after = os.getloadavg()

    medians = {name: statistics.median(values) for name, values in times.items()}
    cpu_medians = {name: statistics.median(values) for name, values in cpu.items()}
    ratio = medians["hybrid-memory"] / medians["minimal SDK server"]
    cpu_ratio = cpu_medians["hybrid-memory"] / cpu_medians["minimal SDK server"]
    for name, values in times.items():
        print(
            f"{name:<20} wall median {medians[name] * 1000:6.0f} ms  min {min(values) * 1000:6.0f} ms"
            f"  CPU median {cpu_medians[name] * 1000:6.0f} ms"
        )
    print(f"ratio wall {ratio:.2f}, CPU {cpu_ratio:.2f}; runs {args.runs} each, interleaved")
    print("load average (1, 5, 15 min): before", load_before, "after", load_after)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        result = {
            "wall_s": times,
            "cpu_s": cpu,
            "wall_medians_s": medians,
            "cpu_medians_s": cpu_medians,
            "ratio": ratio,
            "cpu_ratio": cpu_ratio,
            "load": [load_before, load_after],
        }
        args.out.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
