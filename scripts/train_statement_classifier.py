"""Train the statement classifier the finder ships, from labelled sessions.

    .venv/bin/python scripts/train_statement_classifier.py [--also MORE.jsonl ...]

Reads the labelled sessions shipped in
``src/hybrid_memory/service/knowledge/statements/data/statements.jsonl`` and any ``--also``
files of the same format (one session a line, see
``hybrid_memory.service.knowledge.statements.labelled``), embeds each candidate clause with the
packaged int8 model, fits a logistic regression over embedding and lexical features, and writes
``data/statement_classifier.json``. The threshold is the lowest whose leave-one-project-out
precision on the ``--also`` sessions (the shipped ones stay in every fold) reaches 0.85.
Same inputs, same weights: gradient descent from zeros, no randomness.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from hybrid_memory.embeddings.fastembed_provider import FastEmbedEmbedder
from hybrid_memory.service.knowledge.statements import training
from hybrid_memory.service.knowledge.statements.classifier import WEIGHTS
from hybrid_memory.service.knowledge.statements.labelled import SHIPPED, load
from hybrid_memory.settings import PACKAGED_MODEL


async def main(also: list[Path]) -> None:
    embedder = FastEmbedEmbedder(PACKAGED_MODEL, None, threads=1)
    shipped = training.examples(load(SHIPPED))
    extra = [e for path in also for e in training.examples(load(path))]
    found = shipped + extra
    x = await training.matrix(found, embedder)
    y = np.asarray([e.label for e in found])
    always = np.asarray([True] * len(shipped) + [False] * len(extra))
    if extra:
        scores = training.held_out_scores(x, y, [e.group for e in found], always, PACKAGED_MODEL)
        cut = training.threshold(scores[~always], y[~always])
    else:
        cut = training.threshold(training.train(x, y, PACKAGED_MODEL).scores(x), y)
    classifier = replace(training.train(x, y, PACKAGED_MODEL), threshold=cut)
    classifier.save(WEIGHTS)
    print(
        f"{len(found)} clauses ({int(y.sum())} statements), threshold {cut}, "
        f"{WEIGHTS.stat().st_size} bytes -> {WEIGHTS.name}",
        file=sys.stderr,
    )
    await embedder.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--also", type=Path, action="append", default=[], help="more labelled sessions")
    asyncio.run(main(parser.parse_args().also))
