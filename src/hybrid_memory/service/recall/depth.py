"""Which candidates' memories a recall reads: those that can reach the top, and what they lean on.

The vector channels return ids and scores; fusion needs nothing else. Reading a candidate's
memory (its payload) is what costs, and most candidates cannot reach the first ``limit``
results whatever their memory says. So memories are read best fused relevance first, in
rounds, until every candidate left unread is provably below the ``limit``-th result:

- a candidate's final score is at most ``relevance weight x (its relevance + what a rule could
  still add: a named period's lift, a linked note's share) + recency weight + importance weight``
  (recency and importance are at most 1), taken over the weights' sum;
- the candidates a read one leans on are read with it (the turn before it, the reply after a
  question, the chunks of its message), so every rule sees what it would see with all read;
- the first ``expand.SEED_WINDOW`` candidates, whose notes lend their links, are all read.

Rules that look at every candidate at once (a feedback round, a question about an outcome, a query
naming one of the authors of turns written "Name: text") read them all, as does a request with
``include_invalid`` (answers with history). The results are those of reading every candidate.
"""

from __future__ import annotations

from collections.abc import Iterable

import anyio

from hybrid_memory.backends.base import VectorStore
from hybrid_memory.errors import BackendError
from hybrid_memory.models import Memory, MemoryKind
from hybrid_memory.service.recall import dates, expand, outcomes, ranking, speakers, state
from hybrid_memory.service.recall.channels import KEYWORD_CHANNELS, VECTOR_CHANNELS, skip
from hybrid_memory.service.recall.config import RecallConfig
from hybrid_memory.service.recall.state import RecallState

FIRST = 2
ROUND = 10
"""The first round reads ``FIRST x limit + ROUND`` candidates; a round with too few results ``ROUND`` more."""


def candidates(s: RecallState) -> list[str]:
    """The vector channels' candidates in the order their memories arrive when all are read."""
    return list(dict.fromkeys(h.id for name in VECTOR_CHANNELS for h in s.channels.get(name, ())))


def reads_all(s: RecallState, config: RecallConfig) -> bool:
    """Whether a rule of this request looks at every candidate's memory at once."""
    query = s.query
    if config.feedback > 0 or config.question_factor < 1.0 or config.adjacent.enabled:
        return True
    if s.options.include_invalid:  # closed memories go last, below unread open ones
        return True
    return config.outcomes and outcomes.asks_outcome(query)


def may_name_author(s: RecallState, config: RecallConfig) -> bool:
    """Whether the named-speakers rule may apply: which author a query names depends on every candidate."""
    query = s.query
    if not (config.named_speakers and config.speakers < 1.0) or query == query.lower():
        return False  # an author's name starts with a capital
    return speakers.asks_about(query) is None


def _authored(s: RecallState) -> bool:
    """Whether a read turn names its author: the rule then lowers some, by an author only all can tell."""
    return any(m.kind is MemoryKind.MESSAGE and speakers.author(m.text) for m in s.memories.values())


def leans_on(memory: Memory) -> Iterable[str]:
    """The turns a rule about ``memory`` looks at: the one before it, and after a question the reply."""
    if memory.kind is not MemoryKind.MESSAGE:
        return
    if memory.prev_id is not None:
        yield memory.prev_id
    if memory.next_id is not None and (
        state.text_asks(memory.text) or memory.chunk_index < memory.chunk_count - 1
    ):
        yield memory.next_id


class _Unread(Exception):
    """The memories could not be read; the vector channels were skipped."""


async def read(s: RecallState, vectors: VectorStore, config: RecallConfig, timeout_s: float) -> None:
    """Read the memories of the candidates that can reach the first ``limit`` results (see the module)."""
    try:
        await _read(s, vectors, config, timeout_s)
    except _Unread:
        return


def drop_unread(s: RecallState) -> None:
    """Leave out of the fused list the vector candidates whose memory was not read: none can rank."""
    wanted = set(candidates(s))
    s.fused = [f for f in s.fused if f.id in s.memories or f.id not in wanted]


async def prefetch(s: RecallState, vectors: VectorStore, timeout_s: float) -> None:
    """Read the keyword channels' best candidates while the query is embedded (``s.prefetched``).

    The first round of ``read`` takes about ``FIRST x limit + ROUND`` of the best fused candidates,
    most of them among the keyword channels' first: read beforehand, they cost that round nothing.
    Through the query's filter, as every read; a read that fails is left to ``read`` to make again.
    """
    first = (FIRST * s.options.limit + ROUND) // 2
    ids = list(dict.fromkeys(h.id for name in KEYWORD_CHANNELS for h in s.channels.get(name, ())[:first]))
    held = vectors.cached(ids)
    wanted = [i for i in ids if i not in held]
    if not wanted:
        return
    try:
        with anyio.fail_after(timeout_s):
            page, _ = await vectors.scroll(s.flt.model_copy(update={"ids": wanted}), len(wanted))
    except (BackendError, TimeoutError):
        return
    s.prefetched.update((m.id, m) for m in page)


async def _read(s: RecallState, vectors: VectorStore, config: RecallConfig, timeout_s: float) -> None:
    order = candidates(s)
    position = {i: n for n, i in enumerate(order)}
    wanted = set(order)
    # What this process holds decoded, or read while the query was embedded, costs nothing to read:
    # every such candidate is read at once.
    known = {**vectors.cached(order), **{i: m for i, m in s.prefetched.items() if i in wanted}}
    s.memories.update(sorted(known.items(), key=lambda item: position[item[0]]))
    if reads_all(s, config):
        await _fetch(s, vectors, [i for i in order if i not in s.memories], position, timeout_s)
        return
    weights = config.final
    total = weights.relevance + weights.recency + weights.importance
    lift = config.dates if config.dates > 0 and dates.periods(s.query) else 0.0
    authors = may_name_author(s, config)
    while True:
        state.fuse(s, config)
        unread = [f for f in s.fused if f.id in wanted and f.id not in s.memories]
        if not unread:
            return
        if authors and _authored(s):
            await _fetch(s, vectors, [f.id for f in unread], position, timeout_s)
            return
        ahead = {i for m in s.memories.values() for i in leans_on(m)} & wanted
        missing = sorted(ahead - s.memories.keys(), key=position.__getitem__)
        more = list(dict.fromkeys([*missing, *_contenders(s, config, unread, lift, total)]))
        if not more:
            return
        before = len(s.memories)
        await _fetch(s, vectors, more, position, timeout_s)
        if len(s.memories) == before:  # deleted or filtered out since the search: read the rest at once
            wanted -= set(more)
            await _fetch(s, vectors, [f.id for f in unread if f.id in wanted], position, timeout_s)
            return


def _contenders(
    s: RecallState, config: RecallConfig, unread: list[ranking.Fused], lift: float, total: float
) -> list[str]:
    """The unread candidates that may yet reach the first ``limit`` results or the note seeds' window."""
    if len(s.memories) < FIRST * s.options.limit + ROUND:
        return [f.id for f in unread[: FIRST * s.options.limit + ROUND - len(s.memories)]]
    window = s.fused[: expand.SEED_WINDOW]
    # In the window or able to climb into it (only a named period lifts an unread candidate there).
    cut = window[-1].relevance if len(s.fused) > expand.SEED_WINDOW else -1.0
    found = [f.id for f in unread if f.relevance + lift >= cut]
    share = config.neighbour.weight if any(s.is_note(f.id) for f in window) else 0.0
    state.rank(s, config)
    limit = s.options.limit
    if len(s.ranked) < limit:
        return [*found, *(f.id for f in unread[:ROUND])]
    threshold = s.ranked[limit - 1].score
    w = config.final
    spare = w.recency + w.importance  # recency and importance are at most 1 each

    def bound(f: ranking.Fused) -> float:
        return (w.relevance * min(1.0, f.relevance + lift + share) + spare) / total

    return [*found, *(f.id for f in unread if bound(f) >= threshold)]


async def _fetch(
    s: RecallState, vectors: VectorStore, ids: list[str], position: dict[str, int], timeout_s: float
) -> None:
    """Read ``ids`` through the query's filter; the memories stay in the order of ``position``."""
    if ids:
        try:
            await expand.fetch(s, vectors, ids, timeout_s)
        except (BackendError, TimeoutError) as exc:
            # As when the search that found them fails: the vector channels are skipped.
            for name in VECTOR_CHANNELS:
                if s.channels.pop(name, None) is not None:
                    skip(s, name, exc)
            raise _Unread from exc
    s.memories = dict(sorted(s.memories.items(), key=lambda item: position.get(item[0], len(position))))
