"""A logistic regression over a clause's embedding and its lexical features: statement or not.

Weights are plain JSON shipped in ``data/statement_classifier.json`` (made by
``scripts/train_statement_classifier.py`` from the labelled sessions in ``data/``); scoring
is one dot product in numpy. The threshold is chosen for precision, since a wrong note is
shown in every later session.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from hybrid_memory.service.knowledge.statements.labelled import DATA_DIR

WEIGHTS = DATA_DIR / "statement_classifier.json"
Matrix = npt.NDArray[np.float32]


@dataclass(frozen=True)
class Classifier:
    mean: Matrix
    scale: Matrix
    weights: Matrix
    bias: float
    threshold: float
    model: str
    features: tuple[str, ...]

    def scores(self, rows: Matrix) -> Matrix:
        """The probability that each row (embedding, then lexical features) is a statement."""
        z = ((rows - self.mean) / self.scale) @ self.weights + self.bias
        return (1.0 / (1.0 + np.exp(-z))).astype(np.float32)

    def save(self, path: Path) -> None:
        payload = {
            "model": self.model,
            "features": list(self.features),
            "threshold": round(self.threshold, 4),
            "bias": round(self.bias, 6),
            "mean": [float(f"{v:.5g}") for v in self.mean],
            "scale": [float(f"{v:.5g}") for v in self.scale],
            "weights": [float(f"{v:.5g}") for v in self.weights],
        }
        path.write_text(json.dumps(payload, separators=(",", ":")) + "\n", encoding="utf-8")


def fit(
    rows: Matrix,
    labels: npt.NDArray[np.bool_],
    *,
    model: str,
    features: tuple[str, ...],
    l2: float = 10.0,
    positive_weight: float = 2.0,
    steps: int = 500,
    rate: float = 0.3,
) -> Classifier:
    """A logistic regression fitted by gradient descent on standardised ``rows`` (threshold 0.5)."""
    mean = rows.mean(axis=0)
    scale = rows.std(axis=0) + 1e-6
    z = (rows - mean) / scale
    y = labels.astype(np.float32)
    sample = np.where(labels, positive_weight, 1.0).astype(np.float32)
    weights = np.zeros(rows.shape[1], dtype=np.float32)
    bias = 0.0
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-(z @ weights + bias)))
        g = (p - y) * sample
        weights -= rate * (z.T @ g / len(y) + l2 * weights / len(y))
        bias -= rate * float(g.mean())
    return Classifier(
        mean.astype(np.float32),
        scale.astype(np.float32),
        weights.astype(np.float32),
        bias,
        0.5,
        model,
        features,
    )


def read(path: Path) -> Classifier:
    raw = json.loads(path.read_text(encoding="utf-8"))
    return Classifier(
        np.asarray(raw["mean"], dtype=np.float32),
        np.asarray(raw["scale"], dtype=np.float32),
        np.asarray(raw["weights"], dtype=np.float32),
        float(raw["bias"]),
        float(raw["threshold"]),
        str(raw["model"]),
        tuple(raw["features"]),
    )


@lru_cache(maxsize=1)
def shipped() -> Classifier | None:
    """The classifier shipped with the package (None when its weights are missing)."""
    return read(WEIGHTS) if WEIGHTS.is_file() else None
