"""The hybrid ranker, as pure functions: fusion, recency, importance, diversity, packing.

Nothing here does I/O; every function is tested with literal inputs.

A *channel* is one way of finding candidates (``dense`` vectors, ``keyword`` BM25
over memories, ``graph`` notes by full text, ``neighbour`` notes linked to strong
hits). Each channel returns ids best first; fusion turns ranks into one relevance
score, and the final score mixes relevance with recency and importance.
"""

from __future__ import annotations

import math
from bisect import insort
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

DEFAULT_IMPORTANCE = 0.5


@dataclass(frozen=True, slots=True)
class ChannelHit:
    """One candidate as one channel saw it."""

    id: str
    rank: int
    """1-based rank within the channel."""
    score: float
    """The channel's own score (cosine, BM25, ...), kept for explanation only."""


@dataclass(frozen=True)
class Weights:
    """The final mix of fused relevance, recency and importance."""

    relevance: float = 0.8
    recency: float = 0.1
    importance: float = 0.1
    half_life_days: float = 30.0


@dataclass(frozen=True, slots=True)
class Fused:
    """A candidate after fusion: its relevance and how each channel ranked it."""

    id: str
    relevance: float
    ranks: dict[str, int]
    scores: dict[str, float]

    @property
    def order(self) -> tuple[float, int, str]:
        """The sort key of every fused list: relevance, then the best single rank, then id."""
        return (-self.relevance, min(self.ranks.values()), self.id)


def by_order(f: Fused) -> tuple[float, int, str]:
    # Made again at each sort: cheaper than a cached_property, which takes a lock on every read.
    return (-f.relevance, min(f.ranks.values()), f.id)


def in_order(fused: list[Fused], changed: Collection[str]) -> list[Fused]:
    """``fused`` sorted by ``Fused.order``, where the items whose id is not in ``changed`` are in order.

    A stage that changed nothing keeps the list as is; one that changed a few takes them out and
    puts each back in its place, reading the sort key of a few items instead of every one. The
    order is a total one (ids are distinct), so it is that of sorting the whole list.
    """
    moved = [f for f in fused if f.id in changed] if changed else []
    if not moved:
        return fused
    if len(moved) * RESORT_SHARE >= len(fused):
        fused.sort(key=by_order)
        return fused
    kept = [f for f in fused if f.id not in changed]
    for f in moved:
        insort(kept, f, key=by_order)
    return kept


RESORT_SHARE = 8
"""``in_order`` sorts the whole list again once one item in this many moved."""


@dataclass(frozen=True, slots=True)
class Ranked:
    id: str
    score: float
    relevance: float
    recency: float
    importance: float
    ranks: dict[str, int]
    scores: dict[str, float]


class Tally:
    """Each candidate's fused total, with its rank and raw score in every channel."""

    def __init__(self) -> None:
        self.totals: dict[str, float] = {}
        self.ranks: dict[str, dict[str, int]] = {}
        self.scores: dict[str, dict[str, float]] = {}

    def add(self, channel: str, hit: ChannelHit, value: float) -> None:
        self.totals[hit.id] = self.totals.get(hit.id, 0.0) + value
        self.ranks.setdefault(hit.id, {})[channel] = hit.rank
        self.scores.setdefault(hit.id, {})[channel] = hit.score

    def add_all(self, channel: str, hits: Iterable[ChannelHit], values: Iterable[float]) -> None:
        """``add`` for each hit and its value, in one loop (fusion adds every hit of every channel)."""
        totals, ranks, scores = self.totals, self.ranks, self.scores
        for hit, value in zip(hits, values, strict=True):
            i = hit.id
            totals[i] = totals.get(i, 0.0) + value
            known = ranks.get(i)
            if known is None:
                ranks[i] = {channel: hit.rank}
                scores[i] = {channel: hit.score}
            else:
                known[channel] = hit.rank
                scores[i][channel] = hit.score

    def fused(self, ceiling: float) -> list[Fused]:
        """Totals over ``ceiling``, best first; ties by best single rank, then id."""
        if ceiling == 0.0:
            return []
        out = [
            Fused(id=i, relevance=t / ceiling, ranks=self.ranks[i], scores=self.scores[i])
            for i, t in self.totals.items()
        ]
        out.sort(key=by_order)
        return out


def rrf(
    channels: Mapping[str, Sequence[ChannelHit]], *, k: int = 60, weights: Mapping[str, float] | None = None
) -> list[Fused]:
    """Weighted reciprocal-rank fusion, normalised to 0..1.

    Each channel adds ``w / (k + rank)``; the sum is divided by the best possible
    sum (rank 1 in every channel that returned anything), so 1.0 means "first
    everywhere". Ties break by the best single rank, then by id, so the order is
    deterministic.
    """
    weights = weights or {}
    tally = Tally()
    ceiling = 0.0
    for name, hits in channels.items():
        if not hits:
            continue
        w = weights.get(name, 1.0)
        ceiling += w / (k + 1)
        tally.add_all(name, hits, [w / (k + hit.rank) for hit in hits])
    return tally.fused(ceiling)


def score_fusion(
    channels: Mapping[str, Sequence[ChannelHit]], weights: Mapping[str, float], *, default_weight: float = 0.0
) -> list[Fused]:
    """Weighted sum of min-max normalised channel scores, rescaled so the best possible is 1.0.

    Unlike RRF, a channel's confidence survives fusion: a keyword hit far ahead of the
    rest stays far ahead. Within a channel the best hit scores 1 and the last one 0
    (a channel with one hit, or all hits equal, gives each 1). A channel weighs
    ``weights[name]``, else ``default_weight``. The divisor is the sum of the weights of
    the channels that returned anything, so the score means the same whether or not
    the graph had notes to offer.
    """
    tally = Tally()
    ceiling = 0.0
    for name, hits in channels.items():
        w = weights.get(name, default_weight)
        if not hits or w <= 0:
            continue
        ceiling += w
        top, bottom = max(h.score for h in hits), min(h.score for h in hits)
        spread = top - bottom
        if spread > 0:
            tally.add_all(name, hits, [w * ((hit.score - bottom) / spread) for hit in hits])
        else:
            tally.add_all(name, hits, [w * 1.0 for _ in hits])
    return tally.fused(ceiling)


def expand_adjacent(
    fused: Sequence[Fused],
    adjacent: Mapping[str, Sequence[str]],
    *,
    top: int,
    share: float,
    channel: str = "adjacent",
) -> list[Fused]:
    """Let the neighbours of the ``top`` hits inherit ``share`` of their relevance.

    In a conversation the evidence often sits in the turn next to the one that matches
    the words (the question and its answer). A neighbour keeps its own relevance when
    that is higher; otherwise it takes ``share`` x its best parent's and records the
    ``channel`` with the parent's rank. Order: by relevance, as after fusion.
    """
    by_id = {f.id: f for f in fused}
    changed: set[str] = set()
    for rank, parent in enumerate(fused[:top], 1):
        inherited = share * parent.relevance
        for neighbour in adjacent.get(parent.id, ()):
            current = by_id.get(neighbour)
            if current is not None and current.relevance >= inherited:
                continue
            ranks = dict(current.ranks) if current else {}
            scores = dict(current.scores) if current else {}
            ranks[channel] = rank
            scores[channel] = inherited
            by_id[neighbour] = Fused(id=neighbour, relevance=inherited, ranks=ranks, scores=scores)
            changed.add(neighbour)
    return in_order(list(by_id.values()), changed)


def expand_linked(
    fused: Sequence[Fused],
    links: Mapping[str, Sequence[tuple[str, float]]],
    *,
    share: float,
    below: float = 0.99,
    channel: str = "neighbour",
) -> list[Fused]:
    """Notes linked to a seed gain ``share`` x link strength x the seed's relevance, on top of their own.

    So of a hub's many neighbours the one that also matches the query comes first. The
    gain stops just below the seed (``below`` x its relevance); a better own score stays.
    """
    by_id = {f.id: f for f in fused}
    gains: dict[str, tuple[float, int, float]] = {}
    for rank, seed in enumerate((by_id[s] for s in links if s in by_id), 1):
        for note_id, strength in links[seed.id]:
            gain = share * strength * seed.relevance
            if gain > gains.get(note_id, (0.0, 0, 0.0))[0]:
                gains[note_id] = (gain, rank, seed.relevance)
    for note_id, (gain, rank, cap) in gains.items():
        current = by_id.get(note_id)
        own = current.relevance if current else 0.0
        ranks = {**(current.ranks if current else {}), channel: rank}
        scores = {**(current.scores if current else {}), channel: gain}
        relevance = max(own, min(own + gain, below * cap))
        by_id[note_id] = Fused(id=note_id, relevance=relevance, ranks=ranks, scores=scores)
    return in_order(list(by_id.values()), gains)


def recency(created_at: datetime, now: datetime, *, half_life_days: float) -> float:
    """Exponential decay: 1.0 now, 0.5 after one half-life; future dates count as now."""
    age_days = max(0.0, (now - created_at).total_seconds() / 86_400)
    return math.pow(0.5, age_days / half_life_days)


def final_scores(
    fused: Iterable[Fused],
    *,
    created_at: Callable[[str], datetime],
    importance: Callable[[str], float | None],
    now: datetime,
    weights: Weights,
) -> list[Ranked]:
    """Mix relevance, recency and importance linearly; best first.

    Weights are normalised by their sum, so the score stays in 0..1 whatever the
    caller configures.
    """
    total = weights.relevance + weights.recency + weights.importance
    if total <= 0:
        raise ValueError("at least one ranking weight must be positive")
    ranked = []
    decayed: dict[datetime, float] = {}  # the turns of one session often share one date
    w_rel, w_rec, w_imp = weights.relevance, weights.recency, weights.importance
    for f in fused:
        when = created_at(f.id)
        rec = decayed.get(when)
        if rec is None:
            rec = decayed[when] = recency(when, now, half_life_days=weights.half_life_days)
        imp = importance(f.id)
        imp = DEFAULT_IMPORTANCE if imp is None else imp
        score = (w_rel * f.relevance + w_rec * rec + w_imp * imp) / total
        ranked.append(
            Ranked(
                id=f.id,
                score=score,
                relevance=f.relevance,
                recency=rec,
                importance=imp,
                ranks=f.ranks,
                scores=f.scores,
            )
        )
    ranked.sort(key=by_score)
    return ranked


def by_score(r: Ranked) -> tuple[float, float, str]:
    """The order of final scores: score, then relevance, then id."""
    return (-r.score, -r.relevance, r.id)


def dedupe_by(items: Sequence[Ranked], key: Callable[[str], str]) -> list[Ranked]:
    """Keep the best item of each group (items must be sorted best first)."""
    seen: set[str] = set()
    out = []
    for item in items:
        group = key(item.id)
        if group in seen:
            continue
        seen.add(group)
        out.append(item)
    return out


def pack_to_budget(items: Sequence[Ranked], tokens: Callable[[str], int], max_tokens: int) -> list[Ranked]:
    """Greedy packing, best first: take each item that still fits the budget."""
    out = []
    used = 0
    for item in items:
        cost = tokens(item.id)
        if used + cost <= max_tokens:
            out.append(item)
            used += cost
    return out


def own_words_first(
    fused: Sequence[Fused], prev_of: Mapping[str, str], *, own: str = "keyword", below: float = 0.99
) -> list[Fused]:
    """A turn found through the words of the turn before it stays just below that turn.

    Context channels index a turn together with the tail of the one before it, so a
    reply ("Noted, I will ...") matches a question as well as the statement it answers
    and often better. That helps the reply be *found*; it must not let it outrank the
    statement. When a candidate's previous turn is also a candidate, matched the
    ``own`` channel (its own words) at least as strongly, and yet fused lower, the candidate
    takes ``below`` x that turn's relevance.
    """
    by_id = {f.id: f for f in fused}
    out = []
    changed: set[str] = set()
    for f in fused:
        before = by_id.get(prev_of.get(f.id, ""))
        if (
            before is not None
            and f.relevance > before.relevance
            and before.scores.get(own, 0.0) > 0.0
            and before.scores.get(own, 0.0) >= f.scores.get(own, 0.0)
        ):
            f = Fused(id=f.id, relevance=below * before.relevance, ranks=f.ranks, scores=f.scores)
            changed.add(f.id)
        out.append(f)
    return in_order(out, changed)


def answers_first(
    fused: Sequence[Fused], question_before: Mapping[str, str], *, below: float = 0.99
) -> list[Fused]:
    """A found reply takes the place of the question turn before it (``question_before``: reply -> question).

    A question shares the words of a later query about its answer ("which database should
    billing use?") yet states nothing. Only a reply some channel found is lifted, so a
    question whose answer is elsewhere keeps its place; the question steps just below.
    """
    by_id = {f.id: f for f in fused}
    lifted: dict[str, Fused] = {}
    for answer_id, question_id in question_before.items():
        answer, question = by_id.get(answer_id), by_id.get(question_id)
        if answer is None or question is None or answer.relevance >= question.relevance:
            continue
        lifted[answer_id] = Fused(answer_id, question.relevance, answer.ranks, answer.scores)
        lifted[question_id] = Fused(question_id, below * question.relevance, question.ranks, question.scores)
    return in_order([lifted.get(f.id, f) for f in fused], lifted)


def yield_questions(fused: Sequence[Fused], questions: Collection[str], *, factor: float) -> list[Fused]:
    """Turns that ask rather than state take ``factor`` x their relevance.

    A question shares the words of a later query about its answer ("which database
    should billing use?" / "which database did we choose for billing?") yet states
    nothing; the agent acts on the first result, so the statement should win ties.
    """
    out = [
        Fused(id=f.id, relevance=factor * f.relevance, ranks=f.ranks, scores=f.scores)
        if f.id in questions
        else f
        for f in fused
    ]
    return in_order(out, questions)


def history_last(items: Sequence[Ranked], closed: Collection[str]) -> list[Ranked]:
    """The items in ``closed`` after all others, each part in its own order.

    For memories no longer valid (a newer note superseded or contradicted them): asked
    for with ``include_invalid`` they are history, shown after what replaced them
    whatever their scores, which keep their meaning.
    """
    return [r for r in items if r.id not in closed] + [r for r in items if r.id in closed]
