"""Task outcomes (record_task): what was tried, what happened, whether it worked, as ``task`` memories."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence

from hybrid_memory.models import Memory, MemoryKind, Scope, utcnow
from hybrid_memory.service import _validate
from hybrid_memory.service.redaction import redact


def task_memory(
    scope: Scope,
    *,
    description: str,
    outcome: str,
    success: bool,
    thread_id: str | None,
    tags: Sequence[str],
    private: bool,
    retention_days: float | None,
    max_chars: int,
    count_tokens: Callable[[str], int],
) -> tuple[Memory, int]:
    """The task memory record_task stores, and how many secrets were redacted from it."""
    description = _validate.text(description, "description", max_chars)
    outcome = _validate.text(outcome, "outcome", max_chars)
    verdict = "succeeded" if success else "failed"
    cleaned = redact(f"Task: {description}\nOutcome ({verdict}): {outcome}")
    now = utcnow()
    memory = Memory(
        id=str(uuid.uuid4()),
        kind=MemoryKind.TASK,
        text=cleaned.text,
        project=scope.project,
        user=scope.user,
        thread_id=_validate.identifier(thread_id, "thread_id") if thread_id is not None else None,
        tags=_validate.tags([*tags, "task", "success" if success else "failure"]),
        importance=0.6 if success else 0.7,
        created_at=now,
        source="record_task",
        tokens=count_tokens(cleaned.text),
        private=private,
        expires_at=_validate.expiry(now, retention_days),
    )
    return memory, cleaned.count
