"""Training the statement classifier on labelled sessions, and scoring it honestly (by project).

Used by ``scripts/train_statement_classifier.py`` (which writes the shipped weights) and by
``bench/knowledge_extraction.py`` (which reports leave-one-project-out figures).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.service.knowledge.statements.classifier import Classifier, Matrix, fit
from hybrid_memory.service.knowledge.statements.finder import FEATURES, Candidate, candidates, rows
from hybrid_memory.service.knowledge.statements.labelled import Session, said, stated

PRECISION = 0.85
"""The cross-validated precision the threshold is chosen for (the lowest threshold that keeps it)."""
MIN_THRESHOLD = 0.5


@dataclass(frozen=True)
class Example:
    group: str
    candidate: Candidate
    label: bool


def examples(sessions: Sequence[Session]) -> list[Example]:
    """Every candidate clause of ``sessions``, labelled by whether it says a labelled statement."""
    found: list[Example] = []
    for session in sessions:
        for candidate in candidates(said(session)):
            label = bool(stated(session, candidate.clause.text))
            found.append(Example(session.project, candidate, label))
    return found


async def matrix(found: Sequence[Example], embedder: Embedder) -> Matrix:
    picked = [e.candidate for e in found]
    return rows(picked, await embedder.embed_documents([c.clause.text for c in picked]))


def train(x: Matrix, y: npt.NDArray[np.bool_], model: str) -> Classifier:
    return fit(x, y, model=model, features=FEATURES)


def held_out_scores(
    x: Matrix, y: npt.NDArray[np.bool_], groups: Sequence[str], always: npt.NDArray[np.bool_], model: str
) -> Matrix:
    """Each row scored by a classifier trained without its group (rows in ``always`` are never held out)."""
    scores = np.zeros(len(groups), dtype=np.float32)
    names = np.asarray(groups)
    for group in sorted({g for g, a in zip(groups, always, strict=True) if not a}):
        held = (names == group) & ~always
        scores[held] = train(x[~held], y[~held], model).scores(x[held])
    return scores


def threshold(scores: Matrix, y: npt.NDArray[np.bool_], precision: float = PRECISION) -> float:
    """The lowest threshold whose selection keeps ``precision`` (never below MIN_THRESHOLD)."""
    for cut in np.arange(MIN_THRESHOLD, 0.99, 0.01):
        picked = scores >= cut
        if picked.sum() >= 3 and float(y[picked].mean()) >= precision:
            return float(round(cut, 2))
    return 0.99
