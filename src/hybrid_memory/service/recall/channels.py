"""Gathering: every channel searched concurrently, each under its own time limit."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

import anyio

from hybrid_memory.backends.base import GraphStore, RankedIds, VectorStore
from hybrid_memory.errors import BackendError
from hybrid_memory.models import Memory, Note, NoteHit, Searches, SparseVector, VectorHit
from hybrid_memory.service.recall import ranking
from hybrid_memory.service.recall.config import RecallConfig
from hybrid_memory.service.recall.state import RecallState

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Found:
    """What one channel returned: its ranking, and the memories and notes it named."""

    hits: list[ranking.ChannelHit]
    memories: Sequence[Memory] = ()
    notes: Sequence[Note] = ()


Search = Callable[[], Awaitable[Found]]


def from_vectors(hits: Sequence[VectorHit]) -> Found:
    return Found(
        hits=[ranking.ChannelHit(h.memory.id, r, h.score) for r, h in enumerate(hits, 1)],
        memories=[h.memory for h in hits],
    )


def from_ranked(ranked: Sequence[tuple[str, float]]) -> Found:
    """Ids and scores only: the memories are read later, for the candidates that need them (``depth``)."""
    return Found(hits=[ranking.ChannelHit(i, r, score) for r, (i, score) in enumerate(ranked, 1)])


def from_notes(hits: Sequence[NoteHit]) -> Found:
    return Found(
        hits=[ranking.ChannelHit(h.note.id, r, h.score) for r, h in enumerate(hits, 1)],
        notes=[h.note for h in hits],
    )


class SharedSearch:
    """The vector channels' searches as one ``search_ids`` call, made when the first channel asks.

    One round to the store instead of one per channel; every channel still gets its own
    ranked list. A failure reaches every channel that shares the call.
    """

    def __init__(self, call: Callable[[], Awaitable[RankedIds]]) -> None:
        self._call = call
        self._lock = anyio.Lock()
        self._results: RankedIds | None = None
        self._error: BackendError | None = None

    async def hits(self, name: str) -> list[tuple[str, float]]:
        async with self._lock:  # a channel cancelled mid-call leaves the call to the next one
            if self._results is None and self._error is None:
                try:
                    self._results = await self._call()
                except BackendError as exc:
                    self._error = exc
        if self._error is not None:
            raise self._error
        assert self._results is not None
        return self._results[name]


VECTOR_CHANNELS = ("dense", "keyword", "context")
KEYWORD_CHANNELS = ("keyword", "context")
"""The vector channels that need no query vector: searched while the query is embedded."""
ORDER = ("graph", *VECTOR_CHANNELS)
"""The order fusion takes the channels in, whichever answered first (``settle``)."""


def searches(
    state: RecallState,
    config: RecallConfig,
    *,
    vectors: VectorStore,
    dense: Sequence[float] | None,
    sparse: SparseVector,
    names: Sequence[str] = VECTOR_CHANNELS,
) -> dict[str, Search]:
    """The enabled vector channels among ``names`` for this request, each a call that has not started yet.

    ``dense`` None: the query could not be embedded, and the dense channel is left out.
    """
    n = state.candidates
    enabled = {
        "dense": config.dense.enabled and dense is not None and "dense" in names,
        "keyword": config.keyword.enabled and "keyword" in names,
        "context": config.context.enabled and "context" in names,
    }
    if not any(enabled.values()):
        return {}
    shared = SharedSearch(
        lambda: vectors.search_ids(
            state.flt,
            n,
            Searches(
                dense=list(dense) if enabled["dense"] and dense is not None else None,
                keyword=sparse if enabled["keyword"] else None,
                context=sparse if enabled["context"] else None,
            ),
        )
    )

    def vector_search(name: str) -> Search:
        async def search() -> Found:
            return from_ranked(await shared.hits(name))

        return search

    return {name: vector_search(name) for name in VECTOR_CHANNELS if enabled[name]}


def note_search(state: RecallState, config: RecallConfig, graph: GraphStore) -> dict[str, Search]:
    """The notes' full-text channel when it is on and notes are wanted: it needs no query vector."""
    if not (config.graph.enabled and state.want_notes):
        return {}

    async def graph_search() -> Found:
        return from_notes(await graph.search_notes(state.query, state.note_flt, state.candidates))

    return {"graph": graph_search}


async def gather(state: RecallState, channels: Mapping[str, Search], timeout_s: float) -> None:
    """Run every channel at once; one that fails or runs over is skipped, the others still count."""

    async def one(name: str, search: Search) -> None:
        try:
            with anyio.fail_after(timeout_s):
                found = await search()
        except (BackendError, TimeoutError) as exc:
            skip(state, name, exc)
            return
        absorb(state, name, found)

    if len(channels) == 1:  # nothing to overlap (the dense search once the query is embedded): no task
        [(name, search)] = channels.items()
        await one(name, search)
        return
    async with anyio.create_task_group() as tg:
        for name, search in channels.items():
            tg.start_soon(one, name, search)


def settle(state: RecallState) -> None:
    """The channels in one order (``ORDER``) however their searches overlapped: fusion adds in it."""
    state.channels = {
        **{name: state.channels[name] for name in ORDER if name in state.channels},
        **state.channels,
    }


def absorb(state: RecallState, name: str, found: Found) -> None:
    state.memories.update((m.id, m) for m in found.memories)
    state.notes.update((nt.id, nt) for nt in found.notes)
    state.channels[name] = found.hits


def skip(state: RecallState, name: str, exc: BaseException) -> None:
    logger.warning("%s channel skipped: %s", name, exc)
    state.skipped[name] = str(exc) or type(exc).__name__
