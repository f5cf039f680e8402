"""A child process for the build tests: fill an Edge store, acknowledge each batch, then build its index.

    python -m tests.backends.build_and_die STORE_DIR FIRST_ID POINTS

Point ids are FIRST_ID + 1 ... FIRST_ID + POINTS. Prints ``acked N`` after each batch is
durable and ``building`` just before the optimize, which the test interrupts with ``kill -9``.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from uuid import UUID

import anyio

from hybrid_memory.backends.qdrant_edge import EdgeVectorStore
from hybrid_memory.models import MemoryRecord
from tests.contract.test_vector_store import MODEL, make_memory, make_record

DIMENSION = 384
"""Real-size vectors, so the store passes Edge's indexing threshold and the build takes a while."""
BATCH = 500


def records(first_id: int, count: int) -> list[MemoryRecord]:
    """Points ``first_id + 1`` ... ``first_id + count`` with random real-size vectors."""
    rng = random.Random(first_id)
    return [
        make_record(
            make_memory(f"point {k}", memory_id=str(UUID(int=k))), [rng.gauss(0, 1) for _ in range(DIMENSION)]
        )
        for k in range(first_id + 1, first_id + count + 1)
    ]


async def main(path: Path, first_id: int, points: int) -> None:
    store = EdgeVectorStore(path, timeout_s=600)
    await store.open(dimension=DIMENSION, model=MODEL)
    acked = 0
    while acked < points:
        await store.upsert(records(first_id + acked, BATCH))
        acked += BATCH
        print(f"acked {acked}", flush=True)
    print("building", flush=True)
    await store.optimize()
    print("built", flush=True)


if __name__ == "__main__":
    anyio.run(main, Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
