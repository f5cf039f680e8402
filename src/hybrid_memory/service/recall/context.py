"""The memory context block: core (pinned) + current notes + working (this thread) + recalled, in a budget.

Candidates are ranked core first, then the project's current notes (decisions,
preferences, facts still valid, most important and most recently confirmed first),
then the thread's latest messages newest first, then recall's hits by score, and
packed greedily (:func:`ranking.pack_to_budget`).
Section headers are paid for out of the same budget, and the rendered block is
counted again with the embedding model's own tokenizer, dropping the last item
while it is over, so ``tokens <= max_tokens`` holds whatever the framing costs.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.errors import InvalidInputError
from hybrid_memory.models import (
    ContextItem,
    Memory,
    MemoryContext,
    MemoryFilter,
    MemoryKind,
    Note,
    NoteFilter,
    NoteType,
    RecallResult,
    Scope,
    utcnow,
)
from hybrid_memory.service._pages import pages
from hybrid_memory.service.recall import RecallOptions, ranking
from hybrid_memory.text.citation import cite

MAX_CORE = 100
MAX_WORKING = 50
MAX_NOTES = 30
"""Current notes offered to the block; a project's standing rules and decisions are rarely more."""
NOTES_SCANNED = 500
RECALL_LIMIT = 20
CURRENT_TYPES = (NoteType.DECISION, NoteType.PREFERENCE, NoteType.FACT)
"""The notes that state how the project stands (questions, insights and concepts do not)."""
HEADERS = {
    "core": "Core memory:",
    "notes": "Current notes (decisions, preferences, facts):",
    "working": "Working memory (this thread):",
    "recalled": "Recalled:",
}

Recall = Callable[[Scope, str, RecallOptions], Awaitable[RecallResult]]


@dataclass(frozen=True)
class _Candidate:
    section: str
    item: ContextItem
    line: str


def _line(memory_id: str, text: str, role: str | None) -> str:
    flat = " ".join(text.split())
    return f"- {cite(memory_id)} {role + ': ' if role else ''}{flat}"


def render(chosen: Sequence[_Candidate]) -> str:
    """The block: each non-empty section under its header, in core, notes, working, recalled order."""
    parts: list[str] = []
    for section, header in HEADERS.items():
        lines = [c.line for c in chosen if c.section == section]
        if lines:
            parts.append("\n".join([header, *lines]))
    return "\n\n".join(parts)


class ContextBuilder:
    def __init__(
        self, *, vectors: VectorStore, graph: GraphStore, embedder: Embedder, recall: Recall
    ) -> None:
        self._vectors = vectors
        self._graph = graph
        self._embedder = embedder
        self._recall = recall

    async def build(
        self, scope: Scope, query: str, thread_id: str | None, max_tokens: int
    ) -> tuple[MemoryContext, list[str]]:
        """The context block and the ids it returned (to record their use)."""
        if max_tokens < 1:
            raise InvalidInputError(f"max_tokens must be at least 1, got {max_tokens}.")
        candidates: list[_Candidate] = []
        seen: set[str] = set()

        def add(section: str, memory: Memory, score: float | None = None, role: str | None = None) -> None:
            if memory.id in seen:
                return
            seen.add(memory.id)
            role = role or memory.role
            line = _line(memory.id, memory.text, role)
            item = ContextItem(
                id=memory.id,
                kind=memory.kind,
                text=memory.text,
                tokens=self._embedder.count_tokens(line),
                score=score,
                thread_id=memory.thread_id,
                role=role,
                private=memory.private,
            )
            candidates.append(_Candidate(section, item, line))

        core, _ = await self._vectors.scroll(MemoryFilter(scope=scope, pinned=True), MAX_CORE)
        for memory in sorted(core, key=lambda m: (-(m.importance or 0.5), m.created_at)):
            add("core", memory)
        notes = await self.current_notes(scope, MAX_NOTES)
        # A note's searchable copy carries what the graph does not (private); a note without one is skipped.
        copies = {m.id: m for m in await self._vectors.get(scope, [n.id for n in notes])}
        for note in notes:
            if note.id in copies:
                add("notes", copies[note.id], role=note.type.value)
        if thread_id is not None:
            for memory in await self._latest(scope, thread_id):
                add("working", memory)
        recalled = await self._recall(scope, query, RecallOptions(limit=RECALL_LIMIT))
        by_id = {m.id: m for m in await self._vectors.get(scope, [h.id for h in recalled.results])}
        for hit in recalled.results:
            if hit.id in by_id:
                add("recalled", by_id[hit.id], hit.score)

        chosen = self._pack(candidates, max_tokens)
        text = render(chosen)
        tokens = self._embedder.count_tokens(text) if text else 0
        while tokens > max_tokens:  # the block's joins may tokenise differently from its lines
            chosen = chosen[:-1]
            text = render(chosen)
            tokens = self._embedder.count_tokens(text) if text else 0
        pick = {c.item.id for c in chosen}
        context = MemoryContext(
            core=[c.item for c in chosen if c.section == "core"],
            notes=[c.item for c in chosen if c.section == "notes"],
            working=[c.item for c in chosen if c.section == "working"],
            recalled=[c.item for c in chosen if c.section == "recalled"],
            text=text,
            tokens=tokens,
            max_tokens=max_tokens,
            omitted=len(candidates) - len(pick),
        )
        return context, sorted(pick)

    def _pack(self, candidates: Sequence[_Candidate], max_tokens: int) -> list[_Candidate]:
        header_cost = {s: self._embedder.count_tokens(h) for s, h in HEADERS.items()}
        # Headers of sections that have candidates are paid up front, so packing never overruns.
        budget = max_tokens - sum(header_cost[s] for s in {c.section for c in candidates})
        by_key = {str(i): c for i, c in enumerate(candidates)}
        ordered = [
            ranking.Ranked(
                id=k, score=-float(i), relevance=0.0, recency=0.0, importance=0.0, ranks={}, scores={}
            )
            for i, k in enumerate(by_key)
        ]
        packed = ranking.pack_to_budget(ordered, lambda k: by_key[k].item.tokens, max(budget, 0))
        return [by_key[r.id] for r in packed]

    async def current_notes(self, scope: Scope, limit: int) -> list[Note]:
        """The project's notes valid now that state a decision, preference or fact: the most important
        first, then the most recently modified (a note restated or confirmed is modified again)."""
        flt = NoteFilter(scope=scope, types=list(CURRENT_TYPES), valid_at=utcnow())
        notes = await self._graph.list_notes(flt, NOTES_SCANNED)
        notes.sort(
            key=lambda n: (-(n.importance if n.importance is not None else 0.5), -n.modified.timestamp())
        )
        return notes[:limit]

    async def _latest(self, scope: Scope, thread_id: str) -> list[Memory]:
        """The thread's latest messages, newest first."""
        flt = MemoryFilter(scope=scope, thread_id=thread_id, kinds=[MemoryKind.MESSAGE])
        found: list[Memory] = []
        async for page in pages(self._vectors, flt):
            found = sorted([*found, *page], key=lambda m: (m.created_at, m.chunk_index), reverse=True)
            found = found[:MAX_WORKING]
        return found
