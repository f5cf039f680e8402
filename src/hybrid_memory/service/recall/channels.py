"""Gathering: every channel searched concurrently, each under its own time limit."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass

import anyio

from hybrid_memory import ranking
from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.errors import BackendError
from hybrid_memory.models import Memory, Note, NoteHit, SparseVector, VectorHit
from hybrid_memory.service.recall.config import RecallConfig
from hybrid_memory.service.recall.state import RecallState

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
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


def from_notes(hits: Sequence[NoteHit]) -> Found:
    return Found(
        hits=[ranking.ChannelHit(h.note.id, r, h.score) for r, h in enumerate(hits, 1)],
        notes=[h.note for h in hits],
    )


def searches(
    state: RecallState,
    config: RecallConfig,
    *,
    vectors: VectorStore,
    graph: GraphStore,
    dense: Sequence[float] | None,
    sparse: SparseVector,
) -> dict[str, Search]:
    """The enabled channels for this request, each a call that has not started yet.

    ``dense`` None: the query could not be embedded, and the dense channel is left out.
    """
    n = state.candidates

    async def keyword_search() -> Found:
        return from_vectors(await vectors.search_sparse(sparse, state.flt, n, context=False))

    async def context_search() -> Found:
        return from_vectors(await vectors.search_sparse(sparse, state.flt, n, context=True))

    async def graph_search() -> Found:
        return from_notes(await graph.search_notes(state.query, state.note_flt, n))

    out: dict[str, Search] = {}
    if config.dense.enabled and dense is not None:

        async def dense_search() -> Found:
            return from_vectors(await vectors.search_dense(dense, state.flt, n))

        out["dense"] = dense_search
    if config.keyword.enabled:
        out["keyword"] = keyword_search
    if config.context.enabled:
        out["context"] = context_search
    if config.graph.enabled and state.want_notes:
        out["graph"] = graph_search
    return out


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

    async with anyio.create_task_group() as tg:
        for name, search in channels.items():
            tg.start_soon(one, name, search)


def absorb(state: RecallState, name: str, found: Found) -> None:
    state.memories.update((m.id, m) for m in found.memories)
    state.notes.update((nt.id, nt) for nt in found.notes)
    state.channels[name] = found.hits


def skip(state: RecallState, name: str, exc: BaseException) -> None:
    logger.warning("%s channel skipped: %s", name, exc)
    state.skipped[name] = str(exc) or type(exc).__name__
