"""Pins, the context block, tasks, limits, cleanup and stats: the housekeeping tools."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hybrid_memory.models import (
    CleanupResult,
    ForgetPreview,
    MemoryContext,
    MemoryStats,
    PinResult,
    TaskResult,
)
from hybrid_memory.tools._common import MaxTokens, RetentionDays, SessionScope
from hybrid_memory.tools._sampling import CleanupSummary, TaskWrite
from hybrid_memory.tools.app import AppCtx, app
from hybrid_memory.tools.budget import DEFAULT_TOKENS, MAX_TOKENS


async def pin_memory(memory_id: str, ctx: AppCtx, scope: SessionScope) -> PinResult:
    """Put a memory or note in core memory: always in get_memory_context, never evicted. Keep it small."""
    return await app(ctx).service.pin(scope, memory_id, True)


async def unpin_memory(memory_id: str, ctx: AppCtx, scope: SessionScope) -> PinResult:
    """Take a memory or note out of core memory."""
    return await app(ctx).service.pin(scope, memory_id, False)


async def get_memory_context(
    query: Annotated[str, Field(description="what the conversation is about now")],
    ctx: AppCtx,
    scope: SessionScope,
    thread_id: Annotated[str | None, Field(description="its latest messages are included")] = None,
    max_tokens: Annotated[int, Field(ge=1, le=MAX_TOKENS)] = 1500,
) -> MemoryContext:
    """Core memory, the project's current decisions and facts, the thread's latest messages and what
    query recalls: a prompt-ready block."""
    return await app(ctx).service.memory_context(scope, query, thread_id=thread_id, max_tokens=max_tokens)


async def record_task(
    description: Annotated[str, Field(description="what was attempted")],
    outcome: Annotated[str, Field(description="result, error, fix")],
    success: bool,
    ctx: AppCtx,
    scope: SessionScope,
    write: TaskWrite,
    thread_id: str | None = None,
    tags: Annotated[list[str], Field(max_length=32)] = [],  # noqa: B006
    private: Annotated[bool, Field(description="never exported")] = False,
    retention_days: RetentionDays = None,
) -> TaskResult:
    """Remember a task's outcome so later sessions repeat what worked; recall with kinds=["task"]."""
    # The arguments above reach the service as write.command, a TaskDraft the SDK builds from them.
    return await app(ctx).service.record_task(scope, write.command, summarizer=write.summarizer)


async def forget_preview(
    ctx: AppCtx,
    scope: SessionScope,
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
    cursor: str | None = None,
    max_tokens: MaxTokens = DEFAULT_TOKENS,
) -> ForgetPreview:
    """What cleanup_memory would remove now, and why."""
    return await app(ctx).service.forget_preview(scope, limit, cursor)


async def cleanup_memory(ctx: AppCtx, scope: SessionScope, summary: CleanupSummary) -> CleanupResult:
    """Delete expired memories and evict what the project's limits require (see forget_preview)."""
    return await app(ctx).service.cleanup(scope, summary)


async def memory_stats(ctx: AppCtx, scope: SessionScope) -> MemoryStats:
    """How much this project remembers, its limits, and recall and eviction counts."""
    return await app(ctx).service.stats(scope)
