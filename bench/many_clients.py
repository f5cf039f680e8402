"""Eight stdio clients started at once on one data dir, each with its own ``hybrid-memory serve``.

    nice python bench/many_clients.py [--clients 8] [--calls 200] [--out bench/results/many_clients.json]

Each client runs remember_thread / create_note / recall_memory in a 2:1:2 mix
(``tests/e2e/many_clients.py``). The first server hosts the store; the others join it
over its Unix socket. Reports refusals (a server that could not start or died),
error replies, acknowledged writes missing from the store afterwards, calls/s and
latency percentiles. The model is the packaged one (or HYBRID_MEMORY_EMBEDDING_MODEL_PATH).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from time import perf_counter

import anyio

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.many_clients import lost_writes, run_clients  # noqa: E402

from hybrid_memory.evaluation.locomo import percentile  # noqa: E402


async def main(clients: int, calls: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        data_dir = Path(tmp) / "data"
        started = perf_counter()
        reports = await run_clients(data_dir, clients, calls)
        wall = perf_counter() - started
        lost = await lost_writes(data_dir, reports)
    latencies = sorted(x for r in reports for x in r.latencies)
    done = sum(r.calls for r in reports)
    result = {
        "clients": clients,
        "calls_per_client": calls,
        "calls_done": done,
        "refusals": sum(r.refused is not None for r in reports),
        "errors": sum(len(r.errors) for r in reports),
        "acknowledged_writes": sum(len(r.memory_ids) + len(r.note_ids) for r in reports),
        "lost_writes": len(lost),
        "wall_s": round(wall, 1),
        "calls_per_s": round(done / wall, 1),
        "p50_ms": round(1000 * percentile(latencies, 50), 1),
        "p99_ms": round(1000 * percentile(latencies, 99), 1),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "first_problems": [p for r in reports for p in [r.refused, *r.errors] if p][:5],
    }
    return result


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    report = json.dumps(anyio.run(main, args.clients, args.calls), indent=2)
    print(report)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(report + "\n", encoding="utf-8")
