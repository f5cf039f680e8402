"""Expansion and resolution: linked notes, adjacent turns, and the memory behind every candidate."""

from __future__ import annotations

from collections.abc import Iterable

import anyio

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.errors import BackendError
from hybrid_memory.models import MemoryKind, Neighbourhood, Walk
from hybrid_memory.service.lifecycle.successors import successors
from hybrid_memory.service.recall import ranking
from hybrid_memory.service.recall.channels import skip
from hybrid_memory.service.recall.config import RecallConfig
from hybrid_memory.service.recall.state import RecallState, context_ids

NEIGHBOUR_SEEDS = 3
"""How many of the best note hits lend their links."""
SEED_WINDOW = 10
"""Seeds are taken from this many best candidates."""
NEIGHBOURS_PER_SEED = 10
CITED_PER_NOTE = 4
"""The newest turns a note cites (``src:`` tags) that inherit part of its relevance."""
SOURCE_TAG = "src:"


def note_seeds(state: RecallState) -> list[str]:
    return [f.id for f in state.fused[:SEED_WINDOW] if state.is_note(f.id)][:NEIGHBOUR_SEEDS]


def linked(found: Iterable[tuple[str, Neighbourhood]]) -> dict[str, list[tuple[str, float]]]:
    """Each seed's linked notes with the strength of the link, seeds themselves left out."""
    seeds = set()
    out: dict[str, list[tuple[str, float]]] = {}
    for seed, hood in found:
        seeds.add(seed)
        strength = {lk.to_id if lk.from_id == seed else lk.from_id: lk.strength for lk in hood.links}
        out[seed] = [(nt.id, strength.get(nt.id, 0.0)) for nt in hood.notes]
    return {seed: [(i, w) for i, w in notes if i not in seeds] for seed, notes in out.items()}


async def add_neighbours(state: RecallState, graph: GraphStore, config: RecallConfig) -> None:
    """Notes linked to the best note hits gain part of their relevance (``ranking.expand_linked``)."""
    seeds = note_seeds(state)
    valid_at = None if state.options.include_invalid else state.now
    found: list[tuple[str, Neighbourhood]] = []
    try:
        with anyio.fail_after(config.timeout_s):
            for seed in seeds:
                walk = Walk(note_id=seed, valid_at=valid_at, limit=NEIGHBOURS_PER_SEED)
                hood = await graph.neighbourhood(state.scope, walk)
                found.append((seed, hood))
    except (BackendError, TimeoutError) as exc:
        skip(state, "neighbour", exc)
        return
    for _, hood in found:
        state.notes.update((nt.id, nt) for nt in hood.notes)
    state.fused = ranking.expand_linked(state.fused, linked(found), share=config.neighbour.weight)


def cited_ids(state: RecallState) -> dict[str, list[str]]:
    """The turns each of the best note candidates cites: where a rule, a decision or a file was spoken of."""
    cited: dict[str, list[str]] = {}
    for seed in note_seeds(state):
        note = state.notes.get(seed)
        tags = note.tags if note is not None else state.memories[seed].tags
        sources = [t[len(SOURCE_TAG) :] for t in tags if t.startswith(SOURCE_TAG)]
        if sources:
            cited[seed] = sources[-CITED_PER_NOTE:]
    return cited


async def add_cited(state: RecallState, vectors: VectorStore, config: RecallConfig) -> None:
    """The turns the best notes cite inherit part of their relevance, as linked notes do.

    A question about ``src/auth.py`` or a decision finds its note (or entity) first; the turns
    that said it, in whichever session, come with it. Through the query's filter only.
    """
    share = config.neighbour.weight
    await _inherit(state, vectors, config.timeout_s, cited_ids(state), SEED_WINDOW, share, "neighbour")


async def _inherit(
    state: RecallState,
    vectors: VectorStore,
    timeout_s: float,
    parents: dict[str, list[str]],
    top: int,
    share: float,
    channel: str,
) -> None:
    """Load the memories ``parents`` point to and let them inherit ``share`` of their parent's relevance."""
    wanted = sorted({i for ids in parents.values() for i in ids} - state.memories.keys())
    if wanted:
        try:
            await fetch(state, vectors, wanted, timeout_s)
        except (BackendError, TimeoutError) as exc:
            skip(state, channel, exc)
    reachable = {k: [i for i in ids if i in state.memories] for k, ids in parents.items()}
    state.fused = ranking.expand_adjacent(state.fused, reachable, top=top, share=share, channel=channel)


def adjacent_ids(state: RecallState, top: int) -> dict[str, list[str]]:
    """The turns before and after each of the ``top`` message candidates."""
    adjacent: dict[str, list[str]] = {}
    for f in state.fused[:top]:
        memory = state.memories.get(f.id)
        if memory is not None and memory.kind is MemoryKind.MESSAGE:
            adjacent[f.id] = [i for i in (memory.prev_id, memory.next_id) if i is not None]
    return adjacent


async def add_adjacent(state: RecallState, vectors: VectorStore, config: RecallConfig) -> None:
    """The turns before and after the top message hits inherit part of their relevance."""
    cfg = config.adjacent
    if cfg.enabled:
        adjacent = adjacent_ids(state, cfg.top)
        await _inherit(state, vectors, config.timeout_s, adjacent, cfg.top, cfg.share, "adjacent")


async def fetch(state: RecallState, vectors: VectorStore, ids: list[str], timeout_s: float) -> None:
    """Load memories by id through the query's filter: one outside its thread, kinds or dates stays out."""
    with anyio.fail_after(timeout_s):
        page, _ = await vectors.scroll(state.flt.model_copy(update={"ids": ids}), len(ids))
    state.memories.update((m.id, m) for m in page)


async def resolve(state: RecallState, vectors: VectorStore, graph: GraphStore, timeout_s: float) -> None:
    """Make sure every candidate has its Memory, and drop note memories whose note is gone.

    Notes found by the graph (full text, links) are fetched through the query's own
    filter, so a linked note of another type, tag, thread or date stays out.
    """
    missing = [f.id for f in state.fused if f.id not in state.memories]
    if missing:
        try:
            await fetch(state, vectors, missing, timeout_s)
        except (BackendError, TimeoutError) as exc:
            # Only graph-found notes lack their memory here; without it they cannot be shown.
            skip(state, "graph", exc)
    note_ids = [i for i, m in state.memories.items() if m.kind is MemoryKind.NOTE and i not in state.notes]
    if note_ids and "graph" not in state.skipped:
        try:
            with anyio.fail_after(timeout_s):
                live = {nt.id for nt in await graph.get_notes(state.scope, note_ids)}
        except (BackendError, TimeoutError) as exc:
            state.skipped["graph"] = str(exc) or type(exc).__name__
            return
        for orphan in set(note_ids) - live:
            del state.memories[orphan]


async def add_context(state: RecallState, vectors: VectorStore, timeout_s: float) -> None:
    """Load the turns around the hits to be returned, so each can carry them."""
    wanted = sorted(set(context_ids(state)) - state.memories.keys())
    if wanted:
        try:
            await fetch(state, vectors, wanted, timeout_s)
        except (BackendError, TimeoutError) as exc:
            skip(state, "adjacent", exc)


async def add_successors(state: RecallState, graph: GraphStore, timeout_s: float) -> None:
    """For each closed note about to be returned, the note that superseded or contradicted it."""
    shown = (state.memories[r.id] for r in state.ranked[: state.options.limit])
    closed = [(m.id, m.created_at) for m in shown if m.kind is MemoryKind.NOTE and m.valid_to is not None]
    if not closed:
        return
    try:
        with anyio.fail_after(timeout_s):
            state.successors = await successors(graph, state.scope, closed)
    except (BackendError, TimeoutError) as exc:
        skip(state, "graph", exc)
