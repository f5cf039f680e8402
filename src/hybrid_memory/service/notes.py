"""Notes and links: the knowledge graph, and the searchable copy of each note.

The graph store owns notes and links; the vector store keeps a copy of each note
under the note's id. A note is written to the graph first, then indexed; if the
second write fails the note still exists, and :meth:`Notes.repair` (run at
start-up) re-indexes it.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.errors import InvalidInputError, NotFoundError
from hybrid_memory.models import (
    Direction,
    Link,
    Memory,
    MemoryFilter,
    MemoryKind,
    Neighbourhood,
    Note,
    NoteFilter,
    NoteResult,
    NoteType,
    Relation,
    Scope,
    utcnow,
)
from hybrid_memory.service import _validate
from hybrid_memory.service.commands import NoteDraft
from hybrid_memory.service.indexer import Indexer
from hybrid_memory.service.lifecycle import Lifecycle, Summarizer
from hybrid_memory.service.redaction import redact
from hybrid_memory.service.successors import CLOSING_RELATIONS, successors

NEAR_DUPLICATE_SIMILARITY = 0.95
"""create_note returns a live note of the same scope whose text embeds at least this close (cosine)."""


@dataclass(frozen=True)
class NotePlan:
    """What create_note stores for a draft: validated, redacted and embedded; nothing read or written."""

    note: Note
    memory: Memory
    dense: list[float]
    redacted: int
    force: bool


class Notes:
    """The note and link use cases; MemoryService exposes them under its own names."""

    def __init__(
        self,
        *,
        vectors: VectorStore,
        graph: GraphStore,
        embedder: Embedder,
        indexer: Indexer,
        lifecycle: Lifecycle,
        max_content_chars: int,
    ) -> None:
        self._vectors = vectors
        self._graph = graph
        self._embedder = embedder
        self._indexer = indexer
        self._lifecycle = lifecycle
        self._max_chars = max_content_chars

    def _text(self, value: str, what: str) -> str:
        return _validate.text(value, what, self._max_chars)

    async def get(self, scope: Scope, note_id: str) -> Note:
        found = await self._graph.get_notes(scope, [note_id])
        if not found:
            raise NotFoundError(
                f"No note '{note_id}' in this project. create_note returns note ids; "
                "recall_memory(kinds=['note']) finds existing ones."
            )
        return found[0]

    def _memory(self, note: Note, *, keep: Memory | None = None, **fields: object) -> Memory:
        """The note's searchable copy; ``keep``: its old copy, whose pin, privacy, expiry stay."""
        if keep is not None:
            fields = {
                "pinned": keep.pinned,
                "private": keep.private,
                "expires_at": keep.expires_at,
                "last_accessed_at": keep.last_accessed_at,
                **fields,
            }
        return Memory(
            id=note.id,
            kind=MemoryKind.NOTE,
            text=note.content,
            project=note.project,
            user=note.user,
            thread_id=note.thread_id,
            note_type=note.type,
            tags=note.tags,
            importance=note.importance,
            created_at=note.created,
            valid_from=note.valid_from,
            valid_to=note.valid_to,
            source="create_note",
            tokens=self._embedder.count_tokens(note.content),
        ).model_copy(update=fields)

    async def _index(
        self, note: Note, *, keep: Memory | None = None, dense: list[float] | None = None, **fields: object
    ) -> Memory:
        """Write the note's searchable copy (see :meth:`_memory`)."""
        memory = self._memory(note, keep=keep, **fields)
        await self._indexer.store([memory], dense=[dense])
        return memory

    @staticmethod
    def _result(note: Note, memory: Memory, **fields: object) -> NoteResult:
        return NoteResult.model_validate(
            {
                **note.model_dump(),
                "pinned": memory.pinned,
                "private": memory.private,
                "expires_at": memory.expires_at,
                **fields,
            }
        )

    async def _near_duplicate(self, scope: Scope, dense: list[float]) -> tuple[Note, Memory, float] | None:
        """The live note of ``scope`` closest to ``dense``, when at least NEAR_DUPLICATE_SIMILARITY."""
        flt = MemoryFilter(scope=scope, kinds=[MemoryKind.NOTE])
        for hit in await self._vectors.search_dense(dense, flt, 5):
            if hit.score < NEAR_DUPLICATE_SIMILARITY:
                return None
            if hit.memory.valid_to is None:
                notes = await self._graph.get_notes(scope, [hit.memory.id])
                if notes:
                    return notes[0], hit.memory, hit.score
        return None

    async def prepare(self, scope: Scope, draft: NoteDraft) -> NotePlan:
        """The note create_note would store for ``draft``: validates, redacts and embeds; writes nothing."""
        now = utcnow()
        cleaned = redact(self._text(draft.content, "content"))
        expires_at = _validate.expiry(now, draft.retention_days)
        tags = _validate.tags(draft.tags)
        thread_id = None if draft.thread_id is None else _validate.identifier(draft.thread_id, "thread_id")
        [dense] = await self._embedder.embed_documents([cleaned.text])
        note = Note(
            id=str(uuid.uuid4()),
            project=scope.project,
            user=scope.user,
            content=cleaned.text,
            type=draft.type,
            tags=tags,
            importance=draft.importance,
            thread_id=thread_id,
            created=now,
            modified=now,
            valid_from=now,
        )
        memory = self._memory(note, private=draft.private, expires_at=expires_at)
        return NotePlan(note, memory, dense, cleaned.count, draft.force)

    async def _duplicate(self, scope: Scope, plan: NotePlan) -> tuple[Note, Memory, float] | None:
        return None if plan.force else await self._near_duplicate(scope, plan.dense)

    async def pending(self, scope: Scope, plan: NotePlan) -> Memory | None:
        """The memory :meth:`create` would add for ``plan``; None when it would return a near-duplicate."""
        return None if await self._duplicate(scope, plan) is not None else plan.memory

    async def create(self, scope: Scope, plan: NotePlan, summarizer: Summarizer | None = None) -> NoteResult:
        """A note in the graph and its searchable copy; a live near-duplicate is returned instead."""
        found = await self._duplicate(scope, plan)
        if found is not None:
            existing, memory, similarity = found
            return self._result(
                existing, memory, duplicate=True, similarity=round(similarity, 4), redacted=plan.redacted
            )
        await self._graph.upsert_note(plan.note)
        await self._indexer.store([plan.memory], dense=[plan.dense])
        evicted = await self._lifecycle.enforce(scope, summarizer)
        del evicted  # the note itself may be among them only if every other memory is pinned
        return self._result(plan.note, plan.memory, redacted=plan.redacted)

    async def update(
        self,
        scope: Scope,
        note_id: str,
        *,
        content: str | None = None,
        type: NoteType | None = None,
        tags: Sequence[str] | None = None,
        importance: float | None = None,
    ) -> NoteResult:
        note = await self.get(scope, note_id)
        changes: dict[str, object] = {"modified": utcnow()}
        redacted = 0
        if content is not None:
            cleaned = redact(self._text(content, "content"))
            changes["content"], redacted = cleaned.text, cleaned.count
        if type is not None:
            changes["type"] = type
        if tags is not None:
            changes["tags"] = _validate.tags(tags)
        if importance is not None:
            changes["importance"] = importance
        if len(changes) == 1:
            raise InvalidInputError(
                "Nothing to update: pass at least one of content, type, tags, importance."
            )
        updated = note.model_copy(update=changes)
        old = await self._vectors.get(scope, [note.id])
        await self._graph.upsert_note(updated)
        memory = await self._index(updated, keep=old[0] if old else None)
        return self._result(updated, memory, redacted=redacted)

    async def link(
        self, scope: Scope, *, from_id: str, to_id: str, relation: Relation, strength: float = 1.0
    ) -> Link:
        if from_id == to_id:
            raise InvalidInputError("from_id and to_id are the same note; a link joins two different notes.")
        source = await self.get(scope, from_id)
        target = await self.get(scope, to_id)
        now = utcnow()
        link = await self._graph.upsert_link(
            Link(
                from_id=from_id,
                to_id=to_id,
                relation=relation,
                strength=strength,
                project=scope.project,
                user=scope.user,
                created=now,
                valid_from=now,
            )
        )
        if relation in CLOSING_RELATIONS:
            # "A supersedes B": B ends. "A contradicts B": the older of the two ends.
            older = target if relation is Relation.SUPERSEDES or target.created <= source.created else source
            if older.valid_to is None:
                closed = older.model_copy(update={"valid_to": now, "modified": now})
                await self._graph.upsert_note(closed)
                await self._vectors.set_payload(scope, closed.id, {"valid_to": now})
        return link

    async def linked(
        self,
        scope: Scope,
        note_id: str,
        *,
        depth: int,
        relations: Sequence[Relation] | None,
        direction: Direction,
        limit: int,
    ) -> Neighbourhood:
        start = await self.get(scope, note_id)
        found = await self._graph.neighbourhood(
            scope, note_id, depth=depth, relations=relations, direction=direction, limit=limit
        )
        notes = [start, *found.notes]
        replaced = await successors(self._graph, scope, [(nt.id, nt.created) for nt in notes if nt.valid_to])
        notes = [nt.model_copy(update={"superseded_by": replaced.get(nt.id)}) for nt in notes]
        return Neighbourhood(notes=notes, links=found.links)

    async def repair(self, scope: Scope) -> int:
        """Re-index notes whose vector copy is missing (a write cut short); returns how many."""
        repaired = 0
        offset = 0
        while True:
            page = await self._graph.list_notes(NoteFilter(scope=scope), 256, offset)
            if not page:
                return repaired
            present = {m.id for m in await self._vectors.get(scope, [nt.id for nt in page])}
            for note in page:
                if note.id not in present:
                    await self._index(note)
                    repaired += 1
            offset += len(page)
