"""Notes and links: the knowledge graph, and the searchable copy of each note.

The graph store owns notes and links; the vector store keeps a copy of each note
under the note's id. A note is written to the graph first, then indexed; if the
second write fails the note still exists, and :meth:`Notes.repair` (run at
start-up) re-indexes it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from hybrid_memory.errors import InvalidInputError, NotFoundError
from hybrid_memory.models import (
    Link,
    Memory,
    MemoryFilter,
    MemoryKind,
    Neighbourhood,
    Note,
    NoteFilter,
    NoteResult,
    Relation,
    Scope,
    Walk,
    utcnow,
)
from hybrid_memory.service.lifecycle.lifecycle import Lifecycle, Summarizer
from hybrid_memory.service.lifecycle.successors import CLOSING_RELATIONS, successors
from hybrid_memory.service.redaction import redact
from hybrid_memory.service.stores import Stores
from hybrid_memory.service.writes import validation
from hybrid_memory.service.writes.drafts import NoteDraft, NoteUpdate
from hybrid_memory.text import values
from hybrid_memory.text.values import Change

NEAR_DUPLICATE_SIMILARITY = 0.95
"""create_note returns a live note of the same scope whose text embeds at least this close (cosine)."""
UPDATE_SIMILARITY = 0.8
"""A live note at least this close that says the same but for a value is updated (superseded)."""


@dataclass(frozen=True)
class NotePlan:
    """What create_note stores for a draft: validated, redacted and embedded; nothing read or written."""

    note: Note
    memory: Memory
    dense: list[float]
    redacted: int
    force: bool


def no_note(note_id: str) -> NotFoundError:
    return NotFoundError(
        f"No note '{note_id}' in this project. create_note returns note ids; "
        "recall_memory(kinds=['note']) finds existing ones."
    )


@dataclass(frozen=True)
class Notes:
    """The note and link use cases; MemoryService exposes them under its own names."""

    stores: Stores
    lifecycle: Lifecycle
    max_content_chars: int

    def _text(self, value: str, what: str) -> str:
        return validation.text(value, what, self.max_content_chars)

    async def get(self, scope: Scope, note_id: str) -> Note:
        found = await self.stores.graph.get_notes(scope, [note_id])
        if not found:
            raise no_note(note_id)
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
            tokens=self.stores.embedder.count_tokens(note.content),
        ).model_copy(update=fields)

    async def _index(
        self, note: Note, *, keep: Memory | None = None, dense: list[float] | None = None, **fields: object
    ) -> Memory:
        """Write the note's searchable copy (see :meth:`_memory`)."""
        memory = self._memory(note, keep=keep, **fields)
        await self.stores.indexer.store([memory], dense=[dense])
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

    async def _match(self, scope: Scope, plan: NotePlan) -> tuple[Note, Memory, float, Change | None] | None:
        """The closest live note of ``scope`` that ``plan`` updates (alike but for a value, at least
        UPDATE_SIMILARITY) or repeats (at least NEAR_DUPLICATE_SIMILARITY, no value changed)."""
        flt = MemoryFilter(scope=scope, kinds=[MemoryKind.NOTE])
        hits = [
            h for h in await self.stores.vectors.search_dense(plan.dense, flt, 5) if h.memory.valid_to is None
        ]
        found = {n.id: n for n in await self.stores.graph.get_notes(scope, [h.memory.id for h in hits])}
        for hit in hits:
            note = found.get(hit.memory.id)
            if hit.score < UPDATE_SIMILARITY:
                return None
            if note is None or note.valid_to is not None:
                continue
            changed = values.change(note.content, plan.note.content)
            if changed is not None or hit.score >= NEAR_DUPLICATE_SIMILARITY:
                return note, hit.memory, hit.score, changed
        return None

    async def prepare(self, scope: Scope, draft: NoteDraft) -> NotePlan:
        """The note create_note would store for ``draft``: validates, redacts and embeds; writes nothing."""
        now = utcnow()
        cleaned = redact(self._text(draft.content, "content"))
        expires_at = validation.expiry(now, draft.retention_days)
        tags = validation.tags(draft.tags)
        thread_id = None if draft.thread_id is None else validation.identifier(draft.thread_id, "thread_id")
        [dense] = await self.stores.embedder.embed_documents([cleaned.text])
        note = Note.new(
            scope,
            str(uuid.uuid4()),
            cleaned.text,
            draft.type,
            now,
            tags=tags,
            importance=draft.importance,
            thread_id=thread_id,
        )
        memory = self._memory(note, private=draft.private, expires_at=expires_at)
        return NotePlan(note, memory, dense, cleaned.count, draft.force)

    async def _duplicate(
        self, scope: Scope, plan: NotePlan
    ) -> tuple[Note, Memory, float, Change | None] | None:
        return None if plan.force else await self._match(scope, plan)

    async def pending(self, scope: Scope, plan: NotePlan) -> Memory | None:
        """The memory :meth:`create` would add for ``plan``; None when it would return a near-duplicate."""
        found = await self._duplicate(scope, plan)
        return None if found is not None and found[3] is None else plan.memory

    async def create(self, scope: Scope, plan: NotePlan, summarizer: Summarizer | None = None) -> NoteResult:
        """A note in the graph and its searchable copy; a live near-duplicate is returned instead, and a
        live note alike but for a value ("15 minutes" where this says "30 minutes") is superseded by it."""
        found = await self._duplicate(scope, plan)
        if found is not None and found[3] is None:
            existing, memory, similarity, _ = found
            return self._result(
                existing, memory, duplicate=True, similarity=round(similarity, 4), redacted=plan.redacted
            )
        await self.stores.graph.upsert_note(plan.note)
        await self.stores.indexer.store([plan.memory], dense=[plan.dense])
        updated: dict[str, object] = {}
        if found is not None and (changed := found[3]) is not None:
            older = found[0]
            await self.link(scope, from_id=plan.note.id, to_id=older.id, relation=Relation.SUPERSEDES)
            updated = {"supersedes": older.id, "was": changed.was}
        evicted = await self.lifecycle.enforce(scope, summarizer)
        del evicted  # the note itself may be among them only if every other memory is pinned
        return self._result(plan.note, plan.memory, redacted=plan.redacted, **updated)

    async def update(self, scope: Scope, note_id: str, change: NoteUpdate) -> NoteResult:
        note = await self.get(scope, note_id)
        changes: dict[str, object] = {"modified": utcnow()}
        redacted = 0
        if change.content is not None:
            cleaned = redact(self._text(change.content, "content"))
            changes["content"], redacted = cleaned.text, cleaned.count
        if change.type is not None:
            changes["type"] = change.type
        if change.tags is not None:
            changes["tags"] = validation.tags(change.tags)
        if change.importance is not None:
            changes["importance"] = change.importance
        if len(changes) == 1:
            raise InvalidInputError(
                "Nothing to update: pass at least one of content, type, tags, importance."
            )
        updated = note.model_copy(update=changes)
        old = await self.stores.vectors.get(scope, [note.id])
        await self.stores.graph.upsert_note(updated)
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
        link = await self.stores.graph.upsert_link(Link.new(scope, from_id, to_id, relation, now, strength))
        if relation in CLOSING_RELATIONS:
            # "A supersedes B": B ends. "A contradicts B": the older of the two ends.
            older = target if relation is Relation.SUPERSEDES or target.created <= source.created else source
            if older.valid_to is None:
                closed = older.model_copy(update={"valid_to": now, "modified": now})
                await self.stores.graph.upsert_note(closed)
                await self.stores.vectors.set_payload(scope, closed.id, {"valid_to": now})
        return link

    async def linked(self, scope: Scope, walk: Walk) -> Neighbourhood:
        start = await self.get(scope, walk.note_id)
        found = await self.stores.graph.neighbourhood(scope, walk)
        notes = [start, *found.notes]
        closed = [(nt.id, nt.created) for nt in notes if nt.valid_to]
        replaced = await successors(self.stores.graph, scope, closed)
        notes = [nt.model_copy(update={"superseded_by": replaced.get(nt.id)}) for nt in notes]
        return Neighbourhood(notes=notes, links=found.links)

    async def repair(self, scope: Scope) -> int:
        """Re-index notes whose vector copy is missing (a write cut short); returns how many."""
        repaired = 0
        offset = 0
        while True:
            page = await self.stores.graph.list_notes(NoteFilter(scope=scope), 256, offset)
            if not page:
                return repaired
            present = {m.id for m in await self.stores.vectors.get(scope, [nt.id for nt in page])}
            for note in page:
                if note.id not in present:
                    await self._index(note)
                    repaired += 1
            offset += len(page)
