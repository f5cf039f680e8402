"""Task outcomes (record_task): what was tried, what happened, whether it worked, as ``task`` memories."""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass

from hybrid_memory.models import Memory, MemoryKind, Scope, utcnow
from hybrid_memory.service.redaction import redact
from hybrid_memory.service.writes import validation
from hybrid_memory.service.writes.drafts import TaskDraft


@dataclass(frozen=True)
class TaskPlan:
    """The task memory record_task stores, and how many secrets were redacted from it."""

    memory: Memory
    redacted: int
    success: bool


def task_memory(
    scope: Scope, draft: TaskDraft, *, max_chars: int, count_tokens: Callable[[str], int]
) -> TaskPlan:
    """The task memory record_task stores for ``draft``; validates, writes nothing."""
    description = validation.text(draft.description, "description", max_chars)
    outcome = validation.text(draft.outcome, "outcome", max_chars)
    verdict = "succeeded" if draft.success else "failed"
    cleaned = redact(f"Task: {description}\nOutcome ({verdict}): {outcome}")
    now = utcnow()
    thread_id = draft.thread_id
    memory = Memory(
        id=str(uuid.uuid4()),
        kind=MemoryKind.TASK,
        text=cleaned.text,
        project=scope.project,
        user=scope.user,
        thread_id=validation.identifier(thread_id, "thread_id") if thread_id is not None else None,
        tags=validation.tags([*draft.tags, "task", "success" if draft.success else "failure"]),
        importance=0.6 if draft.success else 0.7,
        created_at=now,
        source="record_task",
        tokens=count_tokens(cleaned.text),
        private=draft.private,
        expires_at=validation.expiry(now, draft.retention_days),
    )
    return TaskPlan(memory=memory, redacted=cleaned.count, success=draft.success)
