"""Cold ``hybrid-memory`` store commands: joined to a running server against opening the store alone.

    python bench/cli_cold.py [--runs 15] [--commands stats,recall] [--out FILE]

Two data dirs get the same memory (a small ``memory.jsonl`` imported into one, its files
copied to the other). A real ``hybrid-memory serve`` holds the second; the first has
no server, so a command there opens the store itself (and loads the model when it
needs one). Each run spawns the command as a fresh process with the same Python and
times spawn to exit; the two cases alternate, so load on the machine falls on both. A
bare ``python -c pass`` is timed in the same rounds: the interpreter's own floor. Also
reports the child's CPU seconds (they barely move with the machine's load) and, once,
the joined command's import time (``python -X importtime``, median of three). Prints medians, the
joined/alone ratio and the load averages.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from time import perf_counter

MEMORY_JSONL = [
    {
        "type": "entity",
        "name": "Ines",
        "entityType": "person",
        "observations": ["Ines keeps the lighthouse."],
    },
    {"type": "entity", "name": "Ferry", "entityType": "thing", "observations": ["The ferry leaves at nine."]},
    {"type": "relation", "from": "Ines", "to": "Ferry", "relationType": "takes"},
]
COMMANDS = {
    "stats": ["stats"],
    "recall": ["recall", "who keeps the lighthouse?"],
    "export": ["export", "{out}/export.jsonl", "--quiet"],
}
READY_WITHIN_S = 120.0


def env_for(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HYBRID_MEMORY_", "QDRANT_", "NEO4J_"))}
    env.update(HYBRID_MEMORY_DATA_DIR=str(data_dir), HYBRID_MEMORY_PROJECT="bench")
    return env


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall seconds spawn -> exit, and the child's CPU seconds (user + system)."""
    start = perf_counter()
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    proc.stderr.close()
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} failed ({proc.returncode}): {err[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime


def wait_for_host(data_dir: Path, server: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + READY_WITHIN_S
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError(f"the server exited with {server.returncode}")
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(str(data_dir / "serve.sock"))
                return
            except OSError:
                time.sleep(0.1)
    raise RuntimeError(f"no server on {data_dir} within {READY_WITHIN_S:g} s")


def import_ms(argv: list[str], env: dict[str, str]) -> float:
    """Cumulative import time of ``hybrid_memory.cli`` as ``-X importtime`` reports it, in ms."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", *argv], env=env, capture_output=True, text=True
    )
    for line in done.stderr.splitlines():
        if line.rstrip().endswith("| hybrid_memory.cli"):
            return int(line.split("|")[1]) / 1000
    raise RuntimeError(f"no import time for hybrid_memory.cli: {done.stderr[-500:]}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument(
        "--commands", default="stats,recall", help=f"comma-separated, of {', '.join(COMMANDS)}"
    )
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    args = parser.parse_args(argv)
    names = args.commands.split(",")
    cli = [sys.executable, "-m", "hybrid_memory"]

    with tempfile.TemporaryDirectory(prefix="cli-cold-") as tmp_name:
        tmp = Path(tmp_name)
        alone, served = tmp / "alone", tmp / "served"
        seed = tmp / "memory.jsonl"
        seed.write_text("".join(json.dumps(item) + "\n" for item in MEMORY_JSONL))
        subprocess.run(
            [*cli, "import", str(seed), "--quiet"], env=env_for(alone), check=True, capture_output=True
        )
        shutil.copytree(alone, served, ignore=shutil.ignore_patterns("serve.sock", "serve.lock"))
        server = subprocess.Popen(
            [*cli, "serve"],
            env=env_for(served),
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            wait_for_host(served, server)
            for name in names:  # the server's first command pays for its model and caches: not counted
                timed([*cli, *(a.format(out=tmp) for a in COMMANDS[name])], env_for(served))
            times: dict[str, list[float]] = {}
            cpu: dict[str, list[float]] = {}

            def record(key: str, result: tuple[float, float]) -> None:
                times.setdefault(key, []).append(result[0])
                cpu.setdefault(key, []).append(result[1])

            load_before = os.getloadavg()
            for _ in range(args.runs):
                record("python -c pass", timed([sys.executable, "-c", "pass"], env_for(alone)))
                for name in names:
                    command = [*cli, *(a.format(out=tmp) for a in COMMANDS[name])]
                    record(f"{name} joined", timed(command, env_for(served)))
                    record(f"{name} alone", timed(command, env_for(alone)))
            load_after = os.getloadavg()
            imports = {}
            for name in names:
                argv = [*cli[1:], *(a.format(out=tmp) for a in COMMANDS[name])]
                imports[f"{name} joined"] = statistics.median(
                    import_ms(argv, env_for(served)) for _ in range(3)
                )
        finally:
            assert server.stdin is not None
            server.stdin.close()
            server.wait(timeout=60)

    medians = {key: statistics.median(values) for key, values in times.items()}
    cpu_medians = {key: statistics.median(values) for key, values in cpu.items()}
    print(f"{args.runs} alternated runs; load average before {load_before}, after {load_after}")
    for key in medians:
        print(f"  {key:<16} wall {medians[key] * 1000:7.0f} ms   cpu {cpu_medians[key] * 1000:7.0f} ms")
    for name in names:
        ratio = medians[f"{name} joined"] / medians[f"{name} alone"]
        print(f"  {name}: joined/alone {ratio:.2f}; joined imports {imports[f'{name} joined']:.0f} ms")
    if args.out:
        result = {
            "runs": args.runs,
            "load_before": load_before,
            "load_after": load_after,
            "median_wall_s": medians,
            "median_cpu_s": cpu_medians,
            "joined_import_ms": imports,
            "python": sys.version.split()[0],
            "cpus": os.cpu_count(),
        }
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
