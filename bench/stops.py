"""What a stop costs: back-to-back writes over stdio, then stdin closed, cycle after cycle.

    nice python bench/stops.py [--cycles 3] [--seconds 45] [--kill-after 2] [--compare] [--out FILE]

Each cycle starts ``hybrid-memory serve`` on one data dir, sends ``remember_thread`` calls
of 100 LoCoMo turns back to back (each waits for its answer) for ``--seconds``, then closes
the server's stdin and times its exit. ``--kill-after S`` kills a server still running S
seconds after that, as the MCP SDK's stdio client does (2 s); without it the bench waits as
long as the server takes. After each cycle a fresh server opens the store, answers one
recall and exits: its resident memory then is "memory after reopening". At the end: the
``temp_segments`` entries left in the store, its allocated size and the memories it holds.
With ``--compare`` the same calls, cycle by cycle, then go to a second store whose stops
are waited out: the two stores' allocated size per memory and memory after reopening are
compared. The model is the packaged one (or HYBRID_MEMORY_EMBEDDING_MODEL_PATH).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.scale import disk, proc_status  # noqa: E402
from tests.e2e.servers import INITIALIZE  # noqa: E402

LOCOMO = REPO.parent / "shared" / "datasets" / "locomo" / "locomo10.json"
BATCH = 100


def turns() -> list[str]:
    conversations = json.loads(LOCOMO.read_text())
    texts: list[str] = []
    for item in conversations:
        conversation = item["conversation"]
        for key, session in conversation.items():
            if key.startswith("session_") and isinstance(session, list):
                texts.extend(str(turn["text"]) for turn in session)
    return texts


class Server:
    """``hybrid-memory serve`` over stdio, spoken to in raw JSON-RPC lines."""

    def __init__(self, data_dir: Path, log: IO[bytes]) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("HYBRID_MEMORY_DATA_DIR")}
        env.update(HYBRID_MEMORY_DATA_DIR=str(data_dir), HYBRID_MEMORY_PROJECT="stops")
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "hybrid_memory", "serve"],
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
        )
        self._next = 1
        self.request(INITIALIZE)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self.send(message)
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise RuntimeError("the server closed its stdout")
            answer: dict[str, Any] = json.loads(line)
            if answer.get("id") == message["id"]:
                if "error" in answer or answer["result"].get("isError"):
                    raise RuntimeError(f"call failed: {str(answer)[:300]}")
                return answer

    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        self._next += 1
        message = {"jsonrpc": "2.0", "id": self._next, "method": "tools/call"}
        return self.request(message | {"params": {"name": tool, "arguments": arguments}})

    def stop(self, kill_after: float | None) -> tuple[float, float, bool]:
        """Close stdin; the seconds until the server exits, the CPU seconds it spent meanwhile
        (which the machine's load does not stretch), and whether it had to be killed."""
        assert self.proc.stdin is not None
        pid = self.proc.pid
        cpu_before = cpu_seconds(pid)
        started = time.perf_counter()
        self.proc.stdin.close()
        killed = False
        while True:
            done, status, usage = os.wait4(pid, os.WNOHANG)
            if done:
                break
            if kill_after is not None and time.perf_counter() - started > kill_after and not killed:
                self.proc.kill()
                killed = True
            time.sleep(0.005)
        self.proc.returncode = os.waitstatus_to_exitcode(status)
        return time.perf_counter() - started, usage.ru_utime + usage.ru_stime - cpu_before, killed


def cpu_seconds(pid: int) -> float:
    """User and system CPU a live process has used so far."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def temp_segments(data_dir: Path) -> list[str]:
    return sorted(p.name for p in data_dir.glob("**/temp_segments/*"))


def cycle(
    data_dir: Path, log: IO[bytes], texts: list[str], n: int, plan: float | int, kill_after: float | None
) -> dict[str, Any]:
    """One server's life: writes for ``plan`` seconds (a float) or calls (an int), then its stop."""
    server = Server(data_dir, log)
    stored = calls = 0
    deadline = time.monotonic() + plan if isinstance(plan, float) else None
    while calls < plan if deadline is None else time.monotonic() < deadline:
        start = (n * 1_000_003 + calls * BATCH) % (len(texts) - BATCH)
        messages = [
            {"role": "user" if i % 2 == 0 else "assistant", "content": text, "id": f"m{i}"}
            for i, text in enumerate(texts[start : start + BATCH])
        ]
        answer = server.call("remember_thread", thread_id=f"c{n}-b{calls}", messages=messages)
        stored += int(answer["result"]["structuredContent"]["stored"])
        calls += 1
    exit_s, exit_cpu_s, killed = server.stop(kill_after)
    reopened = Server(data_dir, log)
    reopened.call("recall_memory", query="what did they say about painting?")
    rss = proc_status(reopened.proc.pid)["VmRSS"]
    reopen_exit_s, _, _ = reopened.stop(None)
    return {
        "cycle": n,
        "calls": calls,
        "stored": stored,
        "exit_s": round(exit_s, 2),
        "exit_cpu_s": round(exit_cpu_s, 2),
        "killed": killed,
        "rss_after_reopen_mb": round(rss, 1),
        "reopen_exit_s": round(reopen_exit_s, 2),
        "temp_segments": len(temp_segments(data_dir)),
    }


def run(data_dir: Path, plans: list[float] | list[int], kill_after: float | None) -> dict[str, Any]:
    """Cycles on one store; per cycle what it did, then the store's size and what it left behind."""
    texts = turns()
    data_dir.mkdir(parents=True, exist_ok=True)
    cycles = []
    with (data_dir.parent / f"{data_dir.name}-servers.log").open("wb") as log:
        for n, plan in enumerate(plans):
            cycles.append(cycle(data_dir, log, texts, n, plan, kill_after))
            print(json.dumps(cycles[-1]), file=sys.stderr)
    stored = sum(c["stored"] for c in cycles)
    size = disk(data_dir)
    return {
        "kill_after_s": kill_after,
        "cycles": cycles,
        "exit_s_max": max(c["exit_s"] for c in cycles),
        "exit_cpu_s_max": max(c["exit_cpu_s"] for c in cycles),
        "memories": stored,
        "allocated_mb": round(size["allocated_mb"], 1),
        "allocated_kb_per_memory": round(1024 * size["allocated_mb"] / max(stored, 1), 2),
        "temp_segments_left": temp_segments(data_dir),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cycles", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=45.0)
    parser.add_argument("--kill-after", type=float, default=None)
    parser.add_argument(
        "--compare",
        action="store_true",
        help="then write the same calls to a second store, waiting out every stop, and compare the two",
    )
    parser.add_argument("--data-dir", type=Path, help="keep the stores under here (default: a temp dir)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data_dir or Path(tmp)
        result: dict[str, Any] = {"stops": run(root / "stops", [args.seconds] * args.cycles, args.kill_after)}
        if args.compare:
            plans = [c["calls"] for c in result["stops"]["cycles"]]
            waited = result["waited"] = run(root / "waited", plans, None)
            stops = result["stops"]
            result["allocated_per_memory_ratio"] = round(
                stops["allocated_kb_per_memory"] / waited["allocated_kb_per_memory"], 2
            )
            result["rss_after_reopen_ratio_by_cycle"] = [
                round(a["rss_after_reopen_mb"] / b["rss_after_reopen_mb"], 3)
                for a, b in zip(stops["cycles"], waited["cycles"], strict=True)
            ]
        result["load_average"] = [round(x, 2) for x in os.getloadavg()]
        result["date"] = time.strftime("%Y-%m-%d")
    text = json.dumps(result, indent=2)
    print(text)
    if args.out:
        args.out.write_text(text + "\n")


if __name__ == "__main__":
    main()
