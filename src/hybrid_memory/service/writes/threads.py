"""Conversation threads: their messages as chunked, redacted, idempotent memories.

A message's memories have deterministic ids (:func:`memory_id`), so remembering a
thread again writes only what is new or changed.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from hybrid_memory.embeddings.chunking import chunk_text
from hybrid_memory.errors import InvalidInputError
from hybrid_memory.models import (
    CodeState,
    Memory,
    MemoryKind,
    MessageIn,
    RememberResult,
    Scope,
    ThreadInfo,
    ThreadList,
    ToolUse,
    utcnow,
)
from hybrid_memory.service import progress
from hybrid_memory.service.indexer import context_tail
from hybrid_memory.service.lifecycle.lifecycle import Lifecycle, Summarizer
from hybrid_memory.service.redaction import redact
from hybrid_memory.service.stores import Stores
from hybrid_memory.service.writes import validation
from hybrid_memory.service.writes.drafts import ThreadDraft
from hybrid_memory.settings import Settings

REMEMBERED_ROLES = frozenset({"user", "assistant"})
_ID_NAMESPACE = uuid.UUID("6f1c2a8e-4a53-4f0e-9a0b-3d0f3f7e2c11")

MAX_LISTED_IDS = 500
"""Memory ids a result lists: 500 ids are about 10,000 tokens."""
PROGRESS_BATCH = 16
"""Memories embedded between two progress reports."""
_BLOCK = "block:"
"""What starts a skip reason that counts parts of a message (``block:<type>``), not whole messages."""


def memory_id(scope: Scope, thread_id: str, message_id: str, chunk_index: int) -> str:
    """Deterministic id of a message chunk: remembering a thread twice writes the same ids."""
    key = "\x1f".join((scope.project, scope.user, thread_id, message_id, str(chunk_index)))
    return str(uuid.uuid5(_ID_NAMESPACE, key))


def _message_text(message: MessageIn) -> tuple[str, list[str]]:
    """The remembered text of a message and the types of the parts left out (one entry a part).

    Tool calls in OpenAI's ``tool_calls`` count as ``tool_call`` parts; content blocks of any type
    but ``text`` (``tool_use``, ``tool_result``, ``thinking``, ``image``, ...) by their type.
    """
    left_out = ["tool_call"] * message.tool_calls
    content = message.content
    if content is None:
        return "", left_out
    if isinstance(content, str):
        return content.strip(), left_out
    texts = [b.text for b in content if b.type == "text" and b.text]
    left_out += [b.type or "unknown" for b in content if b.type != "text"]
    return "\n".join(texts).strip(), left_out


def _skip_reason(role: str, text: str, left_out: list[str]) -> str | None:
    """Why a whole message is left out, or None when it is remembered."""
    if role not in REMEMBERED_ROLES:
        return f"role:{role or 'missing'}"
    if text:
        return None
    if not left_out:
        return "empty"
    kinds = set(left_out)
    return "only tool calls" if kinds <= {"tool_call", "tool_use"} else "no text"


def _message_id(
    message: MessageIn, index: int, role: str, text: str, seen: dict[str, int]
) -> tuple[str, bool]:
    """The caller's message id (or the one derived from it), else one from the role and text;
    numbered when seen before in the call; and whether the caller's id was replaced."""
    replaced = False
    if message.id is not None and message.id.strip():
        message_id, replaced = validation.replaced_identifier(message.id, f"messages[{index}].id")
    else:
        digest = hashlib.sha256(f"{role}\x1f{text}".encode()).hexdigest()[:16]
        message_id = f"h-{digest}"
    # The same id twice in one call (a repeated "ok"): keep both, distinctly.
    occurrence = seen.get(message_id, 0)
    seen[message_id] = occurrence + 1
    return (f"{message_id}#{occurrence}" if occurrence else message_id), replaced


def _link_in_order(planned: list[Memory]) -> list[Memory]:
    """Chain the call's memories (prev_id / next_id): the chain gives each first chunk its context."""
    linked = []
    for i, memory in enumerate(planned):
        before = planned[i - 1] if i else None
        after = planned[i + 1] if i + 1 < len(planned) else None
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
    """Every memory of the call's remembered messages, in order, chained (the chain gives the context)."""
    per_message: list[list[str]] = field(default_factory=list)
    """The memory ids of each remembered message, in order."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Reason -> count; ``block:<type>`` reasons count parts, the others whole messages."""
    redacted: int = 0
    ids_replaced: int = 0

    @property
    def skipped_messages(self) -> int:
        return sum(n for reason, n in self.skipped.items() if not reason.startswith(_BLOCK))

    @property
    def skipped_blocks(self) -> int:
        return sum(n for reason, n in self.skipped.items() if reason.startswith(_BLOCK))


@dataclass(frozen=True)
class Threads:
    """The thread use cases; MemoryService exposes them under its own names."""

    settings: Settings
    stores: Stores
    lifecycle: Lifecycle

    def _chunks(self, text: str) -> list[tuple[str, int]]:
        """``text``'s chunks with their token counts; a text that is one chunk is tokenized once."""
        counted: dict[str, int] = {}

        def token_spans(part: str) -> list[tuple[int, int]]:
            spans = self.stores.embedder.token_spans(part)
            counted[part] = len(spans)
            return spans

        chunks = chunk_text(
            text,
            token_spans=token_spans,
            max_tokens=self.settings.chunk_tokens,
            overlap_tokens=self.settings.chunk_overlap_tokens,
        )
        count = self.stores.embedder.count_tokens
        return [(chunk, counted[chunk] if chunk in counted else count(chunk)) for chunk in chunks]

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
                tokens=tokens,
                private=draft.private,
                expires_at=validation.expiry(created, draft.retention_days),
            )
            for chunk_index, (chunk, tokens) in enumerate(chunks)
        ]

    def prepare(self, scope: Scope, draft: ThreadDraft) -> ThreadPlan:
        """The memories :meth:`remember` would store for ``draft``: validated, redacted, chunked."""
        messages = draft.messages
        thread_id, replaced = validation.replaced_identifier(draft.thread_id, "thread_id")
        write = ThreadPlan(thread_id=thread_id, ids_replaced=int(replaced))
        if not messages:
            raise InvalidInputError(
                "messages is empty. Pass the thread's messages as [{role, content}, ...]."
            )
        if len(messages) > self.settings.max_messages:
            raise InvalidInputError(
                f"{len(messages)} messages in one call; the limit is {self.settings.max_messages}. "
                "Send the thread in several calls with the same thread_id."
            )
        now = utcnow()
        skipped = write.skipped
        planned: list[Memory] = []
        seen_ids: dict[str, int] = {}
        unstorable: tuple[int, str] | None = None
        for index, message in enumerate(messages):
            role = message.role.strip().lower()
            text, left_out = _message_text(message)
            reason = _skip_reason(role, text, left_out)
            # One message no store can keep never costs the rest of its thread.
            problem = None if reason else validation.text_problem(text, self.settings.max_content_chars)
            if problem is not None:
                reason, unstorable = problem, unstorable or (index, text)
            if reason is not None:
                skipped[reason] = skipped.get(reason, 0) + 1
                continue
            for part in left_out:
                skipped[_BLOCK + part] = skipped.get(_BLOCK + part, 0) + 1
            cleaned = redact(text)
            text, write.redacted = cleaned.text, write.redacted + cleaned.count
            message_id, replaced = _message_id(message, index, role, text, seen_ids)
            write.ids_replaced += replaced
            # A microsecond apart, so the thread's order survives messages sent without a time.
            created = message.created_at or now + timedelta(microseconds=index)
            memories = self._message_memories(scope, draft, write.thread_id, message_id, role, text, created)
            code, activity, marks = _code(message, index), _activity(message, index), _marks(message, index)
            if code is not None or activity or marks:
                update = {"code": code, "activity": activity, **marks}
                memories = [m.model_copy(update=update) for m in memories]
            planned.extend(memories)
            write.per_message.append([m.id for m in memories])

        if unstorable is not None and not planned:
            # Nothing else to store: the caller learns what to fix rather than a count.
            index, text = unstorable
            validation.text(text, f"messages[{index}].content", self.settings.max_content_chars)
        write.planned = _link_in_order(planned)
        return write

    async def changed(self, scope: Scope, plan: ThreadPlan) -> list[Memory]:
        """The planned memories new or changed against the store, keeping the stored pin and last access."""
        existing = {m.id: m for m in await self.stores.vectors.get(scope, [m.id for m in plan.planned])}
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
        # Embedding is most of the work: a batch at a time, so a listener sees it advance.
        # A memory's neighbour left out of to_write is stored unchanged: the indexer reads its text.
        known: dict[str, str] = {}
        for start in range(0, len(to_write), PROGRESS_BATCH):
            batch = to_write[start : start + PROGRESS_BATCH]
            # The next batch's first message follows this batch's last: its tail needs no store read.
            await self.stores.indexer.store(batch, known=known)
            known = {batch[-1].id: context_tail(batch[-1].text)}
            done = min(start + PROGRESS_BATCH, len(to_write))
            await progress.report(done, len(to_write), "memories embedded")
        evicted = await self.lifecycle.enforce(scope, summarizer) if to_write else 0
        changed = {m.id for m in to_write}
        stored = sum(1 for ids in plan.per_message if any(i in changed for i in ids))
        all_ids = [i for ids in plan.per_message for i in ids]
        return RememberResult(
            thread_id=plan.thread_id,
            stored=stored,
            unchanged=len(plan.per_message) - stored,
            skipped_messages=plan.skipped_messages,
            skipped_blocks=plan.skipped_blocks,
            chunks=len(to_write),
            memory_ids=all_ids[:MAX_LISTED_IDS],
            more_ids=max(0, len(all_ids) - MAX_LISTED_IDS),
            skipped_reasons=plan.skipped,
            redacted=plan.redacted,
            ids_replaced=plan.ids_replaced,
            evicted=evicted,
        )

    async def list(self, scope: Scope, limit: int, offset: int = 0) -> ThreadList:
        """A page of threads, largest first; one more is asked for to know whether a next page exists."""
        counts = list((await self.stores.vectors.thread_counts(scope, offset + limit + 1)).items())
        page = counts[offset : offset + limit]
        more = len(counts) > offset + limit
        return ThreadList(
            threads=[ThreadInfo(thread_id=t, memories=n) for t, n in page],
            next_offset=offset + limit if more else None,
        )


def _activity(message: MessageIn, index: int) -> list[ToolUse]:
    """The message's ``activity`` (what the hooks capture: files edited and read, commands run)."""
    given = (message.model_extra or {}).get("activity")
    if not given:
        return []
    try:
        return [ToolUse.model_validate(use) for use in given]
    except (ValueError, TypeError):
        raise InvalidInputError(
            f"messages[{index}].activity is not valid; give a list of {{verb, path | command, outcome}} "
            "or leave it out."
        ) from None


def _marks(message: MessageIn, index: int) -> dict[str, object]:
    """The message's ``repeat_key`` and ``transcript_at``, when capture gives them (what it reads back:
    :mod:`hybrid_memory.integrations.capture`)."""
    given = message.model_extra or {}
    key, end = given.get("repeat_key"), given.get("transcript_at")
    if (key is not None and not isinstance(key, str)) or (
        end is not None and (not isinstance(end, int) or isinstance(end, bool) or end < 0)
    ):
        raise InvalidInputError(
            f"messages[{index}].repeat_key must be a string and transcript_at a byte offset (an integer "
            "from 0); or leave them out."
        )
    return {name: value for name, value in (("repeat_key", key), ("transcript_at", end)) if value is not None}


def _code(message: MessageIn, index: int) -> CodeState | None:
    """The message's ``code`` (what the hooks capture: the files its turn edited, as they were then)."""
    given = (message.model_extra or {}).get("code")
    if given is None:
        return None
    try:
        return CodeState.model_validate(given)
    except ValueError:
        raise InvalidInputError(
            f"messages[{index}].code is not valid; give {{files: {{path: blob id}}, commit, branch}} "
            "or leave it out."
        ) from None
