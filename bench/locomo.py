"""LoCoMo retrieval benchmark through the real server over MCP stdio: ``hybrid-memory eval locomo``.

    python bench/locomo.py [PATH] [--out bench/results/locomo.json] [--conversations N] [--no-baselines]

PATH defaults to ``../shared/datasets/locomo/locomo10.json`` beside the checkout;
the model comes from ``HYBRID_MEMORY_EMBEDDING_MODEL_PATH`` (or is downloaded by
name). Prints the tables; writes every number as JSON.
"""

from __future__ import annotations

import sys
from pathlib import Path

from hybrid_memory.cli import main

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "locomo" / "locomo10.json"
DEFAULT_OUT = REPO / "bench" / "results" / "locomo.json"


def run(argv: list[str]) -> int:
    if not argv or argv[0].startswith("-"):
        argv = [str(DEFAULT_DATASET), *argv]
    if "--out" not in argv:
        argv = [*argv, "--out", str(DEFAULT_OUT)]
    return main(["eval", "locomo", *argv])


if __name__ == "__main__":
    sys.exit(run(sys.argv[1:]))
