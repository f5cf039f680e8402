"""Writes as values: a write's arguments (a draft), built once by the tool.

A draft goes to the write as it is, or first to a dry run (``MemoryService.plan_*``),
whose :class:`DryRun` carries the prepared work (validated, redacted, chunked,
embedded) and what the eviction after the write would summarise; the write then
executes that plan instead of preparing it again. A plan holds no store state: the
write still reads the store (stored copies, near-duplicates, the limits) itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from hybrid_memory.models import MessageIn, NoteType
from hybrid_memory.service.lifecycle.lifecycle import SummaryRequest

P = TypeVar("P")


@dataclass(frozen=True)
class NoteDraft:
    """create_note's arguments."""

    content: str
    type: NoteType
    tags: Sequence[str] = ()
    importance: float | None = None
    thread_id: str | None = None
    force: bool = False
    """Store it even when a live note says almost the same."""
    private: bool = False
    retention_days: float | None = None


@dataclass(frozen=True)
class NoteUpdate:
    """update_note's arguments: the fields to change; None leaves a field as it is."""

    content: str | None = None
    type: NoteType | None = None
    tags: Sequence[str] | None = None
    """Replace the old ones."""
    importance: float | None = None


@dataclass(frozen=True)
class TaskDraft:
    """record_task's arguments."""

    description: str
    outcome: str
    success: bool
    thread_id: str | None = None
    tags: Sequence[str] = ()
    private: bool = False
    retention_days: float | None = None


@dataclass(frozen=True)
class ThreadDraft:
    """remember_thread's arguments."""

    thread_id: str
    messages: Sequence[MessageIn]
    private: bool = False
    retention_days: float | None = None


@dataclass(frozen=True)
class DryRun(Generic[P]):
    """A write prepared but not done: its ``plan``, and what its eviction would summarise."""

    plan: P
    summary: SummaryRequest | None
    """None: the write would evict nothing, or nothing that needs a summary written now."""
