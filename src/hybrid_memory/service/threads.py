"""Conversation threads: their messages as chunked, redacted, idempotent memories.

A message's memories have deterministic ids (:func:`memory_id`), so remembering a
thread again writes only what is new or changed.
"""

from __future__ import annotations

import hashlib
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from hybrid_memory.backends.base import VectorStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.embeddings.chunking import chunk_text
from hybrid_memory.errors import InvalidInputError
from hybrid_memory.models import (
    Memory,
    MemoryKind,
    MemoryRecord,
    MessageIn,
    RememberResult,
    Scope,
    ThreadInfo,
    ThreadList,
    utcnow,
)
from hybrid_memory.service import _validate, progress
from hybrid_memory.service.commands import ThreadDraft
from hybrid_memory.service.lifecycle import Lifecycle, Summarizer
from hybrid_memory.service.redaction import redact
from hybrid_memory.settings import Settings

REMEMBERED_ROLES = frozenset({"user", "assistant"})
_ID_NAMESPACE = uuid.UUID("6f1c2a8e-4a53-4f0e-9a0b-3d0f3f7e2c11")

Records = Callable[[Sequence[Memory], None, Mapping[str, str]], Awaitable[list[MemoryRecord]]]
# How much of the previous message joins a message's context (about 100 tokens): enough for
# the question a reply answers, not so much that it drowns the reply.
CONTEXT_CHARS = 400
PROGRESS_BATCH = 16
"""Memories embedded between two progress reports."""


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


def _link_in_order(planned: list[Memory], contexts: dict[str, str]) -> list[Memory]:
    """Chain the call's memories (prev_id / next_id) and give each first chunk its context."""
    linked = []
    for i, memory in enumerate(planned):
        before = planned[i - 1] if i else None
        after = planned[i + 1] if i + 1 < len(planned) else None
        if before is not None and memory.chunk_index == 0:
            tail = before.text[-CONTEXT_CHARS:]
            cut = tail.find(" ") if len(before.text) > CONTEXT_CHARS else -1
            contexts[memory.id] = f"{tail[cut + 1 :]}\n{memory.text}"
        linked.append(
            memory.model_copy(
                update={"prev_id": before.id if before else None, "next_id": after.id if after else None}
            )
        )
    return linked


def _identity(memory: Memory) -> tuple[object, ...]:
    """What makes a stored memory out of date: its text, privacy, or its neighbours (its context)."""
    return memory.text, memory.private, memory.prev_id, memory.next_id


@dataclass
class ThreadPlan:
    """What remembering a thread would store, before comparing it with the store; reads and writes nothing."""

    thread_id: str
    planned: list[Memory] = field(default_factory=list)
    """Every memory of the call's remembered messages, in order, chained and with their contexts."""
    per_message: list[list[str]] = field(default_factory=list)
    """The memory ids of each remembered message, in order."""
    skipped: dict[str, int] = field(default_factory=dict)
    redacted: int = 0
    contexts: dict[str, str] = field(default_factory=dict)
    """Memory id -> its text with the tail of the message before it (first chunks only)."""


class Threads:
    """The thread use cases; MemoryService exposes them under its own names."""

    def __init__(
        self,
        *,
        settings: Settings,
        vectors: VectorStore,
        embedder: Embedder,
        records: Records,
        lifecycle: Lifecycle,
        validate_text: Callable[[str, str], str],
    ) -> None:
        self._settings = settings
        self._vectors = vectors
        self._embedder = embedder
        self._records = records
        self._lifecycle = lifecycle
        self._text = validate_text

    def _chunks(self, text: str) -> list[str]:
        return chunk_text(
            text,
            token_spans=self._embedder.token_spans,
            max_tokens=self._settings.chunk_tokens,
            overlap_tokens=self._settings.chunk_overlap_tokens,
        )

    def _message_memories(
        self,
        scope: Scope,
        draft: ThreadDraft,
        thread_id: str,
        message_id: str,
        role: str,
        text: str,
        created: datetime,
    ) -> list[Memory]:
        """One remembered message as its chunks' memories."""
        chunks = self._chunks(text)
        return [
            Memory(
                id=memory_id(scope, thread_id, message_id, chunk_index),
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
                private=draft.private,
                expires_at=_validate.expiry(created, draft.retention_days),
            )
            for chunk_index, chunk in enumerate(chunks)
        ]

    def prepare(self, scope: Scope, draft: ThreadDraft) -> ThreadPlan:
        """The memories :meth:`remember` would store for ``draft``: validated, redacted, chunked."""
        messages = draft.messages
        write = ThreadPlan(thread_id=_validate.identifier(draft.thread_id, "thread_id"))
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
        skipped = write.skipped
        planned: list[Memory] = []
        seen_ids: dict[str, int] = {}
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
            text, write.redacted = cleaned.text, write.redacted + cleaned.count
            message_id = message.id.strip() if message.id and message.id.strip() else None
            if message_id is None:
                digest = hashlib.sha256(f"{role}\x1f{text}".encode()).hexdigest()[:16]
                message_id = f"h-{digest}"
            # The same id twice in one call (a repeated "ok"): keep both, distinctly.
            occurrence = seen_ids.get(message_id, 0)
            seen_ids[message_id] = occurrence + 1
            if occurrence:
                message_id = f"{message_id}#{occurrence}"
            # A microsecond apart, so the thread's order survives messages sent without a time.
            created = message.created_at or now + timedelta(microseconds=index)
            memories = self._message_memories(scope, draft, write.thread_id, message_id, role, text, created)
            planned.extend(memories)
            write.per_message.append([m.id for m in memories])

        write.planned = _link_in_order(planned, write.contexts)
        return write

    async def changed(self, scope: Scope, plan: ThreadPlan) -> list[Memory]:
        """The planned memories new or changed against the store, keeping the stored pin and last access."""
        existing = {m.id: m for m in await self._vectors.get(scope, [m.id for m in plan.planned])}
        kept = ("pinned", "last_accessed_at")
        return [
            m.model_copy(update={k: getattr(existing[m.id], k) for k in kept}) if m.id in existing else m
            for m in plan.planned
            if m.id not in existing or _identity(existing[m.id]) != _identity(m)
        ]

    async def remember(
        self, scope: Scope, plan: ThreadPlan, summarizer: Summarizer | None = None
    ) -> RememberResult:
        """Store the plan's new or changed memories, then evict what the limits require."""
        to_write = await self.changed(scope, plan)
        if to_write:
            records: list[MemoryRecord] = []
            # Embedding is most of the work: a batch at a time, so a listener sees it advance.
            for start in range(0, len(to_write), PROGRESS_BATCH):
                batch = to_write[start : start + PROGRESS_BATCH]
                records.extend(await self._records(batch, None, plan.contexts))
                await progress.report(len(records), len(to_write), "memories embedded")
            await self._vectors.upsert(records)
        evicted = await self._lifecycle.enforce(scope, summarizer) if to_write else 0
        changed = {m.id for m in to_write}
        stored = sum(1 for ids in plan.per_message if any(i in changed for i in ids))
        return RememberResult(
            thread_id=plan.thread_id,
            stored=stored,
            unchanged=len(plan.per_message) - stored,
            skipped=sum(plan.skipped.values()),
            chunks=len(to_write),
            memory_ids=[i for ids in plan.per_message for i in ids],
            skipped_reasons=plan.skipped,
            redacted=plan.redacted,
            evicted=evicted,
        )

    async def list(self, scope: Scope, limit: int, offset: int = 0) -> ThreadList:
        """A page of threads, largest first; one more is asked for to know whether a next page exists."""
        counts = list((await self._vectors.thread_counts(scope, offset + limit + 1)).items())
        page = counts[offset : offset + limit]
        more = len(counts) > offset + limit
        return ThreadList(
            threads=[ThreadInfo(thread_id=t, memories=n) for t, n in page],
            next_offset=offset + limit if more else None,
        )
