"""Spawn -> initialized: our server against a minimal one-tool SDK server, in the same run.

    python bench/handshake.py [--runs 15] [--out bench/results/handshake.json]

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


def cpu_seconds(pid: int) -> float:
    """User + system CPU a process has used so far, all its threads (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


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
        proc.stdin.close()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="handshakes per server (default 15)")
    parser.add_argument("--out", type=Path, help="also write the numbers as JSON here")
    args = parser.parse_args(argv)

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
