"""Recall: the channels, their fusion, and the final ranking of what they found."""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import anyio

from hybrid_memory import ranking
from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.errors import BackendError
from hybrid_memory.models import (
    Direction,
    Memory,
    MemoryFilter,
    MemoryKind,
    Note,
    NoteFilter,
    NoteType,
    RecallHit,
    RecallResult,
    Scope,
    utcnow,
)
from hybrid_memory.settings import Settings

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class RecallOptions:
    thread_id: str | None = None
    limit: int = 5
    kinds: Sequence[MemoryKind] | None = None
    note_types: Sequence[NoteType] | None = None
    tags: Sequence[str] | None = None
    since: datetime | None = None
    until: datetime | None = None
    include_invalid: bool = False
    as_of: datetime | None = None
    """Answer as memory stood then: created at or before it, and valid then unless include_invalid."""


class Recaller:
    """Runs the recall channels concurrently and ranks what they return."""

    def __init__(
        self,
        *,
        settings: Settings,
        vectors: VectorStore,
        graph: GraphStore,
        embedder: Embedder,
        sparse: Bm25Encoder,
        validate_text: Callable[[str, str], str],
    ) -> None:
        self._settings = settings
        self._vectors = vectors
        self._graph = graph
        self._embedder = embedder
        self._sparse = sparse
        self._text = validate_text
        r = settings.ranking
        self._weights = ranking.Weights(
            relevance=r.relevance_weight,
            recency=r.recency_weight,
            importance=r.importance_weight,
            half_life_days=r.recency_half_life_days,
        )

    async def recall(self, scope: Scope, query: str, options: RecallOptions) -> RecallResult:
        """Hybrid recall: dense + keyword over memories, full text over notes, then their neighbours."""
        query = self._text(query, "query")
        now = options.as_of or utcnow()
        n = max(self._settings.ranking.candidates, options.limit * 4)
        flt = MemoryFilter(
            scope=scope,
            thread_id=options.thread_id,
            kinds=list(options.kinds) if options.kinds else None,
            note_types=list(options.note_types) if options.note_types else None,
            tags=list(options.tags) if options.tags else None,
            created_after=options.since,
            created_before=_before(options.until, options.as_of),
        )
        want_notes = not options.kinds or MemoryKind.NOTE in options.kinds
        note_flt = NoteFilter(
            scope=scope,
            types=flt.note_types,
            tags=flt.tags,
            thread_id=options.thread_id,
            valid_at=None if options.include_invalid else now,
        )
        qvec = await self._embedder.embed_query(query)
        qsparse = self._sparse.encode_query(query)
        channels: dict[str, list[ranking.ChannelHit]] = {}
        memories: dict[str, Memory] = {}
        notes: dict[str, Note] = {}
        skipped: dict[str, str] = {}
        timeout = self._settings.backend_timeout_s

        async def dense() -> None:
            hits = await self._vectors.search_dense(qvec, flt, n)
            memories.update((h.memory.id, h.memory) for h in hits)
            channels["dense"] = [ranking.ChannelHit(h.memory.id, r, h.score) for r, h in enumerate(hits, 1)]

        async def keyword(name: str, context: bool) -> None:
            hits = await self._vectors.search_sparse(qsparse, flt, n, context=context)
            memories.update((h.memory.id, h.memory) for h in hits)
            channels[name] = [ranking.ChannelHit(h.memory.id, r, h.score) for r, h in enumerate(hits, 1)]

        async def graph() -> None:
            try:
                with anyio.fail_after(timeout):
                    hits = await self._graph.search_notes(query, note_flt, n)
            except (BackendError, TimeoutError) as exc:
                logger.warning("graph channel skipped: %s", exc)
                skipped["graph"] = str(exc) or type(exc).__name__
                return
            notes.update((h.note.id, h.note) for h in hits)
            channels["graph"] = [ranking.ChannelHit(h.note.id, r, h.score) for r, h in enumerate(hits, 1)]

        async with anyio.create_task_group() as tg:
            tg.start_soon(dense)
            tg.start_soon(keyword, "keyword", False)
            tg.start_soon(keyword, "context", True)
            if want_notes:
                tg.start_soon(graph)

        fused = self._fuse(channels)
        if want_notes and "graph" not in skipped:
            await self._add_neighbours(scope, fused, memories, notes, channels, now, options)
            fused = self._fuse(channels)
        fused = await self._add_adjacent(fused, memories, flt)

        await self._resolve(scope, flt, fused, memories, notes, skipped)
        candidates = [f for f in fused if f.id in memories and self._admissible(memories[f.id], now, options)]
        ranked = ranking.final_scores(
            candidates,
            created_at=lambda i: memories[i].created_at,
            importance=lambda i: memories[i].importance,
            now=now,
            weights=self._weights,
        )
        ranked = ranking.dedupe_by(ranked, key=lambda i: _group_key(memories[i]))
        return RecallResult(
            query=query,
            results=[_hit(memories[r.id], r) for r in ranked[: options.limit]],
            skipped_channels=skipped,
        )

    def _fuse(self, channels: dict[str, list[ranking.ChannelHit]]) -> list[ranking.Fused]:
        r = self._settings.ranking
        if r.fusion == "rrf":
            return ranking.rrf(channels, k=r.rrf_k, weights=r.channel_weights())
        return ranking.score_fusion(channels, r.channel_weights())

    async def _add_adjacent(
        self, fused: list[ranking.Fused], memories: dict[str, Memory], flt: MemoryFilter
    ) -> list[ranking.Fused]:
        """The turns before and after the top message hits inherit part of their relevance."""
        r = self._settings.ranking
        if r.adjacent_share <= 0 or r.adjacent_top <= 0:
            return fused
        adjacent: dict[str, list[str]] = {}
        for f in fused[: r.adjacent_top]:
            memory = memories.get(f.id)
            if memory is not None and memory.kind is MemoryKind.MESSAGE:
                adjacent[f.id] = [i for i in (memory.prev_id, memory.next_id) if i is not None]
        wanted = sorted({i for ids in adjacent.values() for i in ids} - memories.keys())
        if wanted:
            # Through the query's own filter: a neighbour outside its thread, kinds or dates stays out.
            page, _ = await self._vectors.scroll(flt.model_copy(update={"ids": wanted}), len(wanted))
            memories.update((m.id, m) for m in page)
        reachable = {k: [i for i in ids if i in memories] for k, ids in adjacent.items()}
        return ranking.expand_adjacent(fused, reachable, top=r.adjacent_top, share=r.adjacent_share)

    async def _add_neighbours(
        self,
        scope: Scope,
        fused: list[ranking.Fused],
        memories: dict[str, Memory],
        notes: dict[str, Note],
        channels: dict[str, list[ranking.ChannelHit]],
        now: datetime,
        options: RecallOptions,
    ) -> None:
        """Notes linked to the best note hits join as the ``neighbour`` channel."""
        seeds = [f.id for f in fused[:10] if _is_note(f.id, memories, notes)][:3]
        neighbours: list[ranking.ChannelHit] = []
        seen: set[str] = set(seeds)
        for seed in seeds:
            try:
                with anyio.fail_after(self._settings.backend_timeout_s):
                    found = await self._graph.neighbourhood(
                        scope,
                        seed,
                        depth=1,
                        relations=None,
                        direction=Direction.BOTH,
                        valid_at=None if options.include_invalid else now,
                        limit=10,
                    )
            except (BackendError, TimeoutError) as exc:
                logger.warning("neighbour channel skipped: %s", exc)
                return
            strength = {lk.to_id if lk.from_id == seed else lk.from_id: lk.strength for lk in found.links}
            for note in sorted(found.notes, key=lambda nt: -strength.get(nt.id, 0.0)):
                if note.id in seen:
                    continue
                seen.add(note.id)
                notes[note.id] = note
                neighbours.append(
                    ranking.ChannelHit(note.id, len(neighbours) + 1, strength.get(note.id, 0.0))
                )
        if neighbours:
            channels["neighbour"] = neighbours

    async def _resolve(
        self,
        scope: Scope,
        flt: MemoryFilter,
        fused: list[ranking.Fused],
        memories: dict[str, Memory],
        notes: dict[str, Note],
        skipped: dict[str, str],
    ) -> None:
        """Make sure every candidate has its Memory, and drop note memories whose note is gone.

        Notes found by the graph (full text, links) are fetched through the query's own
        filter, so a linked note of another type, tag, thread or date stays out.
        """
        missing = [f.id for f in fused if f.id not in memories]
        if missing:
            page, _ = await self._vectors.scroll(flt.model_copy(update={"ids": missing}), len(missing))
            memories.update((m.id, m) for m in page)
        note_ids = [i for i, m in memories.items() if m.kind is MemoryKind.NOTE and i not in notes]
        if note_ids and "graph" not in skipped:
            try:
                with anyio.fail_after(self._settings.backend_timeout_s):
                    live = {nt.id for nt in await self._graph.get_notes(scope, note_ids)}
            except (BackendError, TimeoutError) as exc:
                skipped["graph"] = str(exc) or type(exc).__name__
                return
            for orphan in set(note_ids) - live:
                del memories[orphan]

    @staticmethod
    def _admissible(memory: Memory, now: datetime, options: RecallOptions) -> bool:
        if options.as_of is not None and (
            memory.created_at > options.as_of
            or (not options.include_invalid and memory.valid_from is not None and memory.valid_from > now)
        ):
            return False
        if options.include_invalid:
            return True
        return memory.valid_to is None or memory.valid_to > now


def _before(until: datetime | None, as_of: datetime | None) -> datetime | None:
    """The exclusive upper bound on created_at: ``until``, or just after ``as_of`` if earlier."""
    if as_of is None:
        return until
    after = as_of + timedelta(microseconds=1)
    return after if until is None else min(until, after)


def _is_note(item_id: str, memories: dict[str, Memory], notes: dict[str, Note]) -> bool:
    return item_id in notes or (item_id in memories and memories[item_id].kind is MemoryKind.NOTE)


def _group_key(memory: Memory) -> str:
    if memory.kind is MemoryKind.MESSAGE and memory.message_id is not None:
        return f"{memory.thread_id}\x1f{memory.message_id}"
    return memory.id


def _hit(memory: Memory, r: ranking.Ranked) -> RecallHit:
    return RecallHit(
        id=memory.id,
        kind=memory.kind,
        text=memory.text,
        score=round(r.score, 6),
        thread_id=memory.thread_id,
        message_id=memory.message_id,
        role=memory.role,
        note_type=memory.note_type,
        tags=memory.tags,
        importance=memory.importance,
        created_at=memory.created_at,
        valid_to=memory.valid_to,
        chunk_index=memory.chunk_index,
        channels=sorted(r.ranks, key=lambda c: r.ranks[c]),
        ranks=r.ranks,
        relevance=round(r.relevance, 6),
        recency=round(r.recency, 6),
        pinned=memory.pinned,
        private=memory.private,
    )
