"""MemoryService: the use cases, over the storage protocols and the embedder.

Sources of truth: the vector store owns conversation memories; the graph store
owns notes and links, and the vector store keeps a searchable copy of each note
under the note's id. A note is written to the graph first, then indexed; if the
second write fails the note still exists, and :meth:`MemoryService.repair`
(run at start-up) re-indexes it. Recall never returns a note memory whose graph
note is gone: such orphans are dropped from results and deleted on repair.
"""

from __future__ import annotations

import hashlib
import logging
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.embeddings.chunking import chunk_text
from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.errors import InvalidInputError, NotFoundError
from hybrid_memory.lifecycle_models import MemoryContext, TaskResult
from hybrid_memory.models import (
    Direction,
    ForgetResult,
    Link,
    Memory,
    MemoryFilter,
    MemoryKind,
    MemoryRecord,
    MessageIn,
    Neighbourhood,
    Note,
    NoteFilter,
    NoteResult,
    NoteType,
    RecallResult,
    Relation,
    RememberResult,
    Scope,
    ThreadInfo,
    ThreadList,
    utcnow,
)
from hybrid_memory.redaction import redact
from hybrid_memory.service.context import ContextBuilder
from hybrid_memory.service.lifecycle import Lifecycle, Summarizer
from hybrid_memory.service.recall import Recaller, RecallOptions
from hybrid_memory.settings import Settings

logger = logging.getLogger(__name__)

REMEMBERED_ROLES = frozenset({"user", "assistant"})
_ID_NAMESPACE = uuid.UUID("6f1c2a8e-4a53-4f0e-9a0b-3d0f3f7e2c11")
# Links of these kinds say the target is no longer true: the older note's validity ends.
CLOSING_RELATIONS = frozenset({Relation.CONTRADICTS, Relation.SUPERSEDES})
MAX_TAGS = 32
MAX_TAG_CHARS = 64
NEAR_DUPLICATE_SIMILARITY = 0.95
"""create_note returns a live note of the same scope whose text embeds at least this close (cosine)."""
MAX_LISTED_IDS = 500


def _expiry(created: datetime, retention_days: float | None) -> datetime | None:
    if retention_days is None:
        return None
    if retention_days <= 0:
        raise InvalidInputError(f"retention_days must be positive, got {retention_days:g}.")
    return created + timedelta(days=retention_days)


def memory_id(scope: Scope, thread_id: str, message_id: str, chunk_index: int) -> str:
    """Deterministic id of a message chunk: remembering a thread twice writes the same ids."""
    key = "\x1f".join((scope.project, scope.user, thread_id, message_id, str(chunk_index)))
    return str(uuid.uuid5(_ID_NAMESPACE, key))


def _message_text(message: MessageIn) -> tuple[str, int]:
    """The remembered text of a message and how many of its blocks were left out."""
    if isinstance(message.content, str):
        return message.content.strip(), 0
    texts = [b.text for b in message.content if b.type == "text" and b.text]
    return "\n".join(texts).strip(), len(message.content) - len(texts)


class MemoryService:
    """Every use case of the memory server. Tools call this; it never imports ``mcp``."""

    def __init__(
        self,
        *,
        settings: Settings,
        vectors: VectorStore,
        graph: GraphStore,
        embedder: Embedder,
        sparse: Bm25Encoder | None = None,
    ) -> None:
        self._settings = settings
        self._vectors = vectors
        self._graph = graph
        self._embedder = embedder
        self._sparse = sparse or Bm25Encoder()
        self._recaller = Recaller(
            settings=settings,
            vectors=vectors,
            graph=graph,
            embedder=embedder,
            sparse=self._sparse,
            validate_text=self._text,
        )
        self.lifecycle = Lifecycle(
            settings=settings.lifecycle,
            vectors=vectors,
            graph=graph,
            embedder=embedder,
            records=self._records,
        )
        self._context = ContextBuilder(vectors=vectors, embedder=embedder, recall=self._recaller.recall)

    # --- validation helpers -------------------------------------------------------

    def _text(self, value: str, what: str) -> str:
        text = value.strip()
        if not text:
            raise InvalidInputError(f"{what} is empty. Pass the text to remember.")
        limit = self._settings.max_content_chars
        if len(text) > limit:
            raise InvalidInputError(
                f"{what} has {len(text):,} characters; the limit is {limit:,}. "
                "Split it into several notes or messages, or summarise it first."
            )
        return text

    @staticmethod
    def _tags(tags: Sequence[str]) -> list[str]:
        clean = sorted({t.strip() for t in tags if t.strip()})
        if len(clean) > MAX_TAGS:
            raise InvalidInputError(f"{len(clean)} tags given; at most {MAX_TAGS} are allowed.")
        for tag in clean:
            if len(tag) > MAX_TAG_CHARS:
                raise InvalidInputError(f"Tag '{tag[:20]}…' is longer than {MAX_TAG_CHARS} characters.")
        return clean

    @staticmethod
    def _identifier(value: str, what: str) -> str:
        ident = value.strip()
        if not ident:
            raise InvalidInputError(f"{what} is empty. Pass a non-empty {what}.")
        if len(ident) > 256:
            raise InvalidInputError(f"{what} is longer than 256 characters.")
        return ident

    # --- embedding --------------------------------------------------------------------

    async def _records(
        self, memories: Sequence[Memory], dense: list[list[float]] | None = None
    ) -> list[MemoryRecord]:
        dense = dense or await self._embedder.embed_documents([m.text for m in memories])
        return [
            MemoryRecord(memory=m, dense=d, sparse=self._sparse.encode_document(m.text))
            for m, d in zip(memories, dense, strict=True)
        ]

    def _chunks(self, text: str) -> list[str]:
        return chunk_text(
            text,
            token_spans=self._embedder.token_spans,
            max_tokens=self._settings.chunk_tokens,
            overlap_tokens=self._settings.chunk_overlap_tokens,
        )

    # --- threads ---------------------------------------------------------------------

    async def remember_thread(
        self,
        scope: Scope,
        thread_id: str,
        messages: Sequence[MessageIn],
        *,
        private: bool = False,
        retention_days: float | None = None,
        summarizer: Summarizer | None = None,
    ) -> RememberResult:
        """Store a thread's user and assistant messages, chunked, secrets redacted; idempotent per message."""
        thread_id = self._identifier(thread_id, "thread_id")
        if not messages:
            raise InvalidInputError(
                "messages is empty. Pass the thread's messages as [{role, content}, ...]."
            )
        if len(messages) > self._settings.max_messages:
            raise InvalidInputError(
                f"{len(messages)} messages in one call; the limit is {self._settings.max_messages}. "
                "Send the thread in several calls with the same thread_id."
            )
        now = utcnow()
        skipped: dict[str, int] = {}
        planned: list[Memory] = []
        per_message: list[list[str]] = []
        seen_ids: dict[str, int] = {}
        redacted = 0
        for index, message in enumerate(messages):
            role = message.role.strip().lower()
            if role not in REMEMBERED_ROLES:
                skipped[f"role:{role or 'missing'}"] = skipped.get(f"role:{role or 'missing'}", 0) + 1
                continue
            text, left_out = _message_text(message)
            if left_out:
                skipped["non-text blocks"] = skipped.get("non-text blocks", 0) + left_out
            if not text:
                skipped["empty"] = skipped.get("empty", 0) + 1
                continue
            text = self._text(text, f"messages[{index}].content")
            cleaned = redact(text)
            text, redacted = cleaned.text, redacted + cleaned.count
            message_id = message.id.strip() if message.id and message.id.strip() else None
            if message_id is None:
                digest = hashlib.sha256(f"{role}\x1f{text}".encode()).hexdigest()[:16]
                message_id = f"h-{digest}"
            # The same id twice in one call (a repeated "ok"): keep both, distinctly.
            occurrence = seen_ids.get(message_id, 0)
            seen_ids[message_id] = occurrence + 1
            if occurrence:
                message_id = f"{message_id}#{occurrence}"
            chunks = self._chunks(text)
            # A microsecond apart, so the thread's order survives messages sent without a time.
            created = message.created_at or now + timedelta(microseconds=index)
            ids = []
            for chunk_index, chunk in enumerate(chunks):
                mid = memory_id(scope, thread_id, message_id, chunk_index)
                ids.append(mid)
                planned.append(
                    Memory(
                        id=mid,
                        kind=MemoryKind.MESSAGE,
                        text=chunk,
                        project=scope.project,
                        user=scope.user,
                        thread_id=thread_id,
                        message_id=message_id,
                        role=role,
                        chunk_index=chunk_index,
                        chunk_count=len(chunks),
                        created_at=created,
                        source="remember_thread",
                        tokens=self._embedder.count_tokens(chunk),
                        private=private,
                        expires_at=_expiry(created, retention_days),
                    )
                )
            per_message.append(ids)

        existing = {m.id: m for m in await self._vectors.get(scope, [m.id for m in planned])}
        to_write = [
            m
            for m in planned
            if m.id not in existing or (existing[m.id].text, existing[m.id].private) != (m.text, m.private)
        ]
        changed = {m.id for m in to_write}
        if to_write:
            kept = ("pinned", "last_accessed_at")
            to_write = [
                m.model_copy(update={k: getattr(existing[m.id], k) for k in kept}) if m.id in existing else m
                for m in to_write
            ]
            await self._vectors.upsert(await self._records(to_write))
        evicted = await self.lifecycle.enforce(scope, summarizer) if to_write else 0
        stored = sum(1 for ids in per_message if any(i in changed for i in ids))
        return RememberResult(
            thread_id=thread_id,
            stored=stored,
            unchanged=len(per_message) - stored,
            skipped=sum(skipped.values()),
            chunks=len(to_write),
            memory_ids=[i for ids in per_message for i in ids],
            skipped_reasons=skipped,
            redacted=redacted,
            evicted=evicted,
        )

    async def list_threads(self, scope: Scope, limit: int) -> ThreadList:
        counts = await self._vectors.thread_counts(scope, limit)
        return ThreadList(threads=[ThreadInfo(thread_id=t, memories=n) for t, n in counts.items()])

    # --- notes and links ----------------------------------------------------------------

    async def _note(self, scope: Scope, note_id: str) -> Note:
        found = await self._graph.get_notes(scope, [note_id])
        if not found:
            raise NotFoundError(
                f"No note '{note_id}' in this project. create_note returns note ids; "
                "recall_memory(kinds=['note']) finds existing ones."
            )
        return found[0]

    async def _index_note(
        self, note: Note, *, keep: Memory | None = None, dense: list[float] | None = None, **fields: object
    ) -> Memory:
        """Write the note's searchable copy; ``keep``: its old copy, whose pin, privacy, expiry stay."""
        if keep is not None:
            fields = {
                "pinned": keep.pinned,
                "private": keep.private,
                "expires_at": keep.expires_at,
                "last_accessed_at": keep.last_accessed_at,
                **fields,
            }
        memory = Memory(
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
        await self._vectors.upsert(await self._records([memory], None if dense is None else [dense]))
        return memory

    @staticmethod
    def _note_result(note: Note, memory: Memory, **fields: object) -> NoteResult:
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

    async def create_note(
        self,
        scope: Scope,
        *,
        content: str,
        type: NoteType,
        tags: Sequence[str] = (),
        importance: float | None = None,
        thread_id: str | None = None,
        force: bool = False,
        private: bool = False,
        retention_days: float | None = None,
        summarizer: Summarizer | None = None,
    ) -> NoteResult:
        """A note in the graph and its searchable copy; a live near-duplicate is returned instead."""
        now = utcnow()
        cleaned = redact(self._text(content, "content"))
        expires_at = _expiry(now, retention_days)
        [dense] = await self._embedder.embed_documents([cleaned.text])
        if not force:
            found = await self._near_duplicate(scope, dense)
            if found is not None:
                existing, memory, similarity = found
                return self._note_result(
                    existing, memory, duplicate=True, similarity=round(similarity, 4), redacted=cleaned.count
                )
        note = Note(
            id=str(uuid.uuid4()),
            project=scope.project,
            user=scope.user,
            content=cleaned.text,
            type=type,
            tags=self._tags(tags),
            importance=importance,
            thread_id=self._identifier(thread_id, "thread_id") if thread_id is not None else None,
            created=now,
            modified=now,
            valid_from=now,
        )
        await self._graph.upsert_note(note)
        memory = await self._index_note(note, dense=dense, private=private, expires_at=expires_at)
        evicted = await self.lifecycle.enforce(scope, summarizer)
        del evicted  # the note itself may be among them only if every other memory is pinned
        return self._note_result(note, memory, redacted=cleaned.count)

    async def update_note(
        self,
        scope: Scope,
        note_id: str,
        *,
        content: str | None = None,
        type: NoteType | None = None,
        tags: Sequence[str] | None = None,
        importance: float | None = None,
    ) -> NoteResult:
        note = await self._note(scope, note_id)
        changes: dict[str, object] = {"modified": utcnow()}
        redacted = 0
        if content is not None:
            cleaned = redact(self._text(content, "content"))
            changes["content"], redacted = cleaned.text, cleaned.count
        if type is not None:
            changes["type"] = type
        if tags is not None:
            changes["tags"] = self._tags(tags)
        if importance is not None:
            changes["importance"] = importance
        if len(changes) == 1:
            raise InvalidInputError(
                "Nothing to update: pass at least one of content, type, tags, importance."
            )
        updated = note.model_copy(update=changes)
        old = await self._vectors.get(scope, [note.id])
        await self._graph.upsert_note(updated)
        memory = await self._index_note(updated, keep=old[0] if old else None)
        return self._note_result(updated, memory, redacted=redacted)

    async def create_link(
        self, scope: Scope, *, from_id: str, to_id: str, relation: Relation, strength: float = 1.0
    ) -> Link:
        if from_id == to_id:
            raise InvalidInputError("from_id and to_id are the same note; a link joins two different notes.")
        source = await self._note(scope, from_id)
        target = await self._note(scope, to_id)
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

    async def linked_notes(
        self,
        scope: Scope,
        note_id: str,
        *,
        depth: int,
        relations: Sequence[Relation] | None,
        direction: Direction,
        limit: int,
    ) -> Neighbourhood:
        start = await self._note(scope, note_id)
        found = await self._graph.neighbourhood(
            scope, note_id, depth=depth, relations=relations, direction=direction, limit=limit
        )
        return Neighbourhood(notes=[start, *found.notes], links=found.links)

    # --- forgetting -----------------------------------------------------------------------

    async def forget(
        self, scope: Scope, *, ids: Sequence[str] = (), thread_id: str | None = None
    ) -> ForgetResult:
        """Delete memories or notes by id, or a whole thread's messages."""
        if not ids and thread_id is None:
            raise InvalidInputError(
                "Pass ids (memory or note ids from recall_memory) or a thread_id to forget."
            )
        deleted_notes = 0
        deleted_ids: list[str] = []
        for note in await self._graph.get_notes(scope, list(ids)):
            if await self._graph.delete_note(scope, note.id):
                deleted_notes += 1
                deleted_ids.append(note.id)
        memory_ids = list(ids)
        if thread_id is not None:
            flt = MemoryFilter(scope=scope, thread_id=thread_id, kinds=[MemoryKind.MESSAGE])
            offset: str | None = None
            while True:
                page, offset = await self._vectors.scroll(flt, 256, offset)
                memory_ids.extend(m.id for m in page)
                if offset is None:
                    break
        present = [m.id for m in await self._vectors.get(scope, memory_ids)]
        deleted_memories = await self._vectors.delete(scope, present) if present else 0
        deleted_ids.extend(i for i in present if i not in deleted_ids)
        missing = [i for i in ids if i not in deleted_ids]
        if ids and missing and not deleted_ids:
            named = ", ".join(repr(m) for m in missing[:5])
            raise NotFoundError(
                f"Nothing to forget: no memory or note {named} in this project. "
                "recall_memory returns the ids you can forget."
            )
        return ForgetResult(
            deleted_memories=deleted_memories,
            deleted_notes=deleted_notes,
            ids=deleted_ids[:MAX_LISTED_IDS],
            more_ids=max(0, len(deleted_ids) - MAX_LISTED_IDS),
        )

    # --- recall ----------------------------------------------------------------------------

    async def recall(self, scope: Scope, query: str, options: RecallOptions) -> RecallResult:
        """Hybrid recall: dense + keyword over memories, full text over notes, then their neighbours."""
        result = await self._recaller.recall(scope, query, options)
        self.lifecycle.record_recall(scope, bool(result.results))
        await self.lifecycle.touch(scope, [r.id for r in result.results])
        return result

    async def memory_context(
        self, scope: Scope, query: str, *, thread_id: str | None, max_tokens: int
    ) -> MemoryContext:
        """Core + working + recalled memory as one cited block within ``max_tokens``."""
        context, used = await self._context.build(scope, query, thread_id, max_tokens)
        self.lifecycle.record_recall(scope, bool(context.recalled))
        await self.lifecycle.touch(scope, used)
        return context

    # --- tasks ---------------------------------------------------------------------------------

    async def record_task(
        self,
        scope: Scope,
        *,
        description: str,
        outcome: str,
        success: bool,
        thread_id: str | None = None,
        tags: Sequence[str] = (),
        private: bool = False,
        retention_days: float | None = None,
        summarizer: Summarizer | None = None,
    ) -> TaskResult:
        """A task outcome as a ``task`` memory: what was tried, what happened, whether it worked."""
        description = self._text(description, "description")
        outcome = self._text(outcome, "outcome")
        verdict = "succeeded" if success else "failed"
        cleaned = redact(f"Task: {description}\nOutcome ({verdict}): {outcome}")
        now = utcnow()
        memory = Memory(
            id=str(uuid.uuid4()),
            kind=MemoryKind.TASK,
            text=cleaned.text,
            project=scope.project,
            user=scope.user,
            thread_id=self._identifier(thread_id, "thread_id") if thread_id is not None else None,
            tags=self._tags([*tags, "task", "success" if success else "failure"]),
            importance=0.6 if success else 0.7,
            created_at=now,
            source="record_task",
            tokens=self._embedder.count_tokens(cleaned.text),
            private=private,
            expires_at=_expiry(now, retention_days),
        )
        await self._vectors.upsert(await self._records([memory]))
        evicted = await self.lifecycle.enforce(scope, summarizer)
        return TaskResult(
            id=memory.id, text=memory.text, success=success, redacted=cleaned.count, evicted=evicted
        )

    # --- maintenance ------------------------------------------------------------------------

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
                    await self._index_note(note)
                    repaired += 1
            offset += len(page)
