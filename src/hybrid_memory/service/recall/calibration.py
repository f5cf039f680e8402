"""Scores on a fixed scale, the same in every query: calibrated channel scores and a candidate's match.

Per-query fusion (:mod:`~hybrid_memory.service.recall.ranking`) gives the best candidate of any
query 1; these say whether anything found is relevant at all. Pure functions, like the ranker.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

from hybrid_memory.service.recall.ranking import ChannelHit, Fused, Tally


@dataclass(frozen=True)
class Calibration:
    """A fixed map from a channel's raw score to 0..1, the same for every query.

    ``(score - floor)`` clipped at 0, then either saturated as ``x / (x + saturation)``
    (BM25, unbounded) or scaled linearly so ``ceiling`` and above count 1 (cosine).
    """

    floor: float = 0.0
    ceiling: float = 1.0
    saturation: float | None = None

    def __call__(self, score: float) -> float:
        x = max(0.0, score - self.floor)
        if self.saturation is not None:
            return x / (x + self.saturation)
        span = self.ceiling - self.floor
        return min(1.0, x / span) if span > 0 else float(x > 0)


def term_coverage(query_terms: Collection[int], text_terms: Collection[int]) -> float:
    """The share of the query's distinct terms (stemmed, stop words left out) that a text holds."""
    wanted = set(query_terms)
    return len(wanted.intersection(text_terms)) / len(wanted) if wanted else 0.0


def match_strength(coverage: float, cosine: float | None, dense: Calibration | None) -> float:
    """How well a candidate's own text matched, 0..1, on the same scale in every query.

    The mean of two shares that mean the same whatever the query: how much of the query's words
    the text holds (``coverage``) and how close its meaning is (the dense channel's cosine through
    its fixed ``dense`` calibration; 0 when that channel did not find it). With no dense channel,
    coverage alone. Unlike fused relevance, which gives the best candidate of any query 1, a query
    about something never stored gets low matches. Ranking keeps per-query fusion; this only
    answers "is anything here relevant at all".
    """
    if dense is None:
        return coverage
    return (coverage + (dense(cosine) if cosine is not None else 0.0)) / 2


def calibrated_fusion(
    channels: Mapping[str, Sequence[ChannelHit]],
    weights: Mapping[str, float],
    calibrations: Mapping[str, Calibration],
) -> list[Fused]:
    """Weighted sum of calibrated channel scores over the weights of the channels that ran.

    Unlike min-max, the first hit of a weak channel is not worth 1: a relevance of 0.3
    means the same in every query, so a caller's ``min_score`` can say "nothing
    relevant". A channel that ran counts in the divisor whether it found anything or
    not. A channel without a calibration keeps its raw score clipped to 0..1.
    """
    ceiling = sum(weights.get(name, 0.0) for name in channels if weights.get(name, 0.0) > 0)
    tally = Tally()
    for name, hits in channels.items():
        w = weights.get(name, 0.0)
        if w <= 0:
            continue
        calibrate = calibrations.get(name, Calibration())
        for hit in hits:
            tally.add(name, hit, w * calibrate(hit.score))
    return tally.fused(ceiling)
