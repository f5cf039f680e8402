"""Final scores for the candidates that can reach the first results, and no others.

Scoring a candidate (its recency, the mix of the weights) costs more than fusing it, and a recall
shows ``limit`` messages out of a hundred candidates or more. A candidate's final score is at most
``(relevance weight x its relevance + recency weight + importance weight x the highest importance)
/ their sum`` (recency is at most 1). Taken best relevance first, once that bound falls below the
``limit``-th best message's score so far, no candidate left can take a place among the first
``limit``: their order is that of scoring every candidate. Pure; tested with literal inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hybrid_memory.service.recall import ranking

AT_ONCE = 20
"""Candidates scored at a time (at least twice the limit) until none left can rank."""


def best_scores(
    candidates: Sequence[ranking.Fused],
    score: Callable[[list[ranking.Fused]], list[ranking.Ranked]],
    *,
    limit: int,
    group: Callable[[str], str],
    top_importance: float,
    weights: ranking.Weights,
) -> list[ranking.Ranked]:
    """``score`` applied to the candidates that may reach the first ``limit`` groups, best score first.

    ``group``: the message a candidate belongs to (one result a message); ``top_importance``: the
    highest importance among the candidates, or more. Beyond the first ``limit`` groups, the list
    holds only what was scored.
    """
    w = weights
    if min(w.relevance, w.recency, w.importance) < 0 or limit <= 0:
        return score(list(candidates))
    total = w.relevance + w.recency + w.importance
    spare = w.recency + w.importance * top_importance
    order = sorted(candidates, key=lambda f: -f.relevance)
    out: list[ranking.Ranked] = []
    best: dict[str, float] = {}
    threshold: float | None = None
    step = max(AT_ONCE, 2 * limit)
    start = 0
    while start < len(order):
        if threshold is not None and (w.relevance * order[start].relevance + spare) / total < threshold:
            break
        part = score(order[start : start + step])
        start += step
        out += part
        for r in part:
            key = group(r.id)
            best[key] = max(best.get(key, r.score), r.score)
        if len(best) >= limit:
            threshold = sorted(best.values(), reverse=True)[limit - 1]
    out.sort(key=ranking.by_score)
    return out
