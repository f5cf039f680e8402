"""Diversity in the first results: one thread (a session) does not fill every slot.

A question whose answer is spread over several conversations ("what has she painted?")
needs a slot for each of them; the best-matching session tends to supply several
near-alike turns first. Each result from a thread already shown gives up a share of its
score, so the best turn of the next thread can step in front of a session's third-best.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

from hybrid_memory import ranking
from hybrid_memory.service.recall.config import RecallConfig
from hybrid_memory.service.recall.state import RecallState

WINDOW = 3
"""Only the first ``WINDOW * limit`` results are reordered; below that order is left alone."""


def by_thread(
    ranked: Sequence[ranking.Ranked], thread_of: Callable[[str], str], *, share: float, window: int
) -> list[ranking.Ranked]:
    """The first ``window`` items reordered greedily, a thread's n-th scoring ``(1 - share) ** n``.

    ``ranked`` must be best first. Within a thread order is kept, so the thread's best stays first;
    an item's ``score`` becomes the discounted score it was placed by.
    """
    if share <= 0 or window <= 1:
        return list(ranked)
    head, tail = ranked[:window], ranked[window:]
    queues: dict[str, list[ranking.Ranked]] = {}
    for item in head:
        queues.setdefault(thread_of(item.id), []).append(item)
    position = {item.id: i for i, item in enumerate(head)}
    taken = dict.fromkeys(queues, 0)
    keep = 1.0 - share
    out: list[ranking.Ranked] = []
    while len(out) < len(head):
        thread = max(
            (t for t, q in queues.items() if taken[t] < len(q)),
            key=lambda t: (queues[t][taken[t]].score * keep ** taken[t], -position[queues[t][taken[t]].id]),
        )
        item = queues[thread][taken[thread]]
        out.append(replace(item, score=item.score * keep ** taken[thread]))
        taken[thread] += 1
    return [*out, *tail]


def by_exchange(
    ranked: Sequence[ranking.Ranked], neighbours: Callable[[str], Sequence[str]], *, share: float, window: int
) -> list[ranking.Ranked]:
    """The first ``window`` items reordered greedily, one beside an item already placed scoring ``1 - share``.

    A turn beside a result is shown with it (``context_before`` / ``context_after``), so as a result
    of its own it repeats what the reader already has.
    """
    if share <= 0 or window <= 1:
        return list(ranked)
    pool, tail = list(ranked[:window]), ranked[window:]
    placed: set[str] = set()
    out: list[ranking.Ranked] = []
    while pool:

        def worth(item: ranking.Ranked) -> float:
            near = any(n in placed for n in neighbours(item.id))
            return item.score * (1.0 - share) if near else item.score

        best = max(range(len(pool)), key=lambda k: (worth(pool[k]), -k))
        item = pool.pop(best)
        out.append(replace(item, score=worth(item)))
        placed.add(item.id)
    return [*out, *tail]


def apply(state: RecallState, config: RecallConfig) -> None:
    """Reorder ``state.ranked`` so the first results come from several threads (``config.spread``)."""
    memories = state.memories
    window = WINDOW * max(state.options.limit, 10)
    if config.spread_turns > 0:

        def neighbours(item_id: str) -> list[str]:
            m = memories[item_id]
            return [i for i in (m.prev_id, m.next_id) if i is not None]

        state.ranked = by_exchange(state.ranked, neighbours, share=config.spread_turns, window=window)
    if config.spread <= 0:
        return

    def thread_of(item_id: str) -> str:
        thread = memories[item_id].thread_id
        return item_id if thread is None else thread

    state.ranked = by_thread(state.ranked, thread_of, share=config.spread, window=window)
