"""Memory lifecycle: core memory pins, the context block, limits, cleanup, stats, task outcomes."""

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
from hybrid_memory.tools._common import SessionScope
from hybrid_memory.tools._sampling import CleanupSummary, TaskWrite
from hybrid_memory.tools.context import AppCtx, app

MemoryId = Annotated[str, Field(description="A memory or note id (from recall_memory or create_note)")]


async def pin_memory(memory_id: MemoryId, ctx: AppCtx, scope: SessionScope) -> PinResult:
    """Move a memory or note into core memory: always part of get_memory_context, never evicted.

    Pin what every future conversation needs (the user's name, standing preferences,
    the project's ground rules). Keep core memory small: it takes budget first.
    """
    return await app(ctx).service.pin(scope, memory_id, True)


async def unpin_memory(memory_id: MemoryId, ctx: AppCtx, scope: SessionScope) -> PinResult:
    """Move a memory or note out of core memory, back to archival memory (reached by recall)."""
    return await app(ctx).service.pin(scope, memory_id, False)


async def get_memory_context(
    query: Annotated[str, Field(description="What the conversation is about now, in plain words")],
    ctx: AppCtx,
    scope: SessionScope,
    thread_id: Annotated[
        str | None, Field(description="The current conversation: its latest messages form working memory")
    ] = None,
    max_tokens: Annotated[
        int, Field(ge=1, le=100_000, description="Token budget of the whole block (embedding tokenizer)")
    ] = 1500,
) -> MemoryContext:
    """One block of memory ready to put in a prompt, within a token budget.

    Core memory (pinned) first, then working memory (the latest messages of `thread_id`),
    then memories recalled for `query`, best first; whatever does not fit is left out
    (`omitted`). Each line of `text` cites its source as [memory:<id>]; `tokens` never
    exceeds `max_tokens`. Call it at the start of a conversation or when its topic shifts.
    """
    return await app(ctx).service.memory_context(scope, query, thread_id=thread_id, max_tokens=max_tokens)


async def record_task(
    description: Annotated[str, Field(description="What was attempted")],
    outcome: Annotated[str, Field(description="What happened: the result, the error, the fix")],
    success: Annotated[bool, Field(description="Whether it worked")],
    ctx: AppCtx,
    scope: SessionScope,
    write: TaskWrite,
    thread_id: Annotated[str | None, Field(description="The conversation it happened in")] = None,
    tags: Annotated[list[str], Field(max_length=32, description="Short labels")] = [],  # noqa: B006
    private: Annotated[bool, Field(description="Keep it out of exports")] = False,
    retention_days: Annotated[
        float | None, Field(gt=0, le=36500, description="Delete it after this many days")
    ] = None,
) -> TaskResult:
    """Remember the outcome of a task, so later sessions repeat what worked and avoid what failed.

    Stored as a `task` memory tagged `task` and `success` or `failure`; find them with
    recall_memory(kinds=['task']).
    """
    # The arguments above reach the service as write.command, a TaskDraft the SDK builds from them.
    return await app(ctx).service.record_task(scope, write.command, summarizer=write.summarizer)


async def forget_preview(
    ctx: AppCtx,
    scope: SessionScope,
    limit: Annotated[int, Field(ge=1, le=200, description="Items per page")] = 50,
    cursor: Annotated[str | None, Field(description="next_cursor of the previous page")] = None,
) -> ForgetPreview:
    """Dry run of cleanup_memory: what retention and the project's limits would remove now.

    Changes nothing. Each item says why: `expired` (retention), `ttl`, `max_items` or
    `max_tokens` (eviction, least recently used or oldest first; pinned memories never).
    """
    return await app(ctx).service.forget_preview(scope, limit, cursor)


async def cleanup_memory(ctx: AppCtx, scope: SessionScope, summary: CleanupSummary) -> CleanupResult:
    """Delete expired memories (retention) and evict what the project's limits require.

    Evicted memories are replaced by one summary memory when summarize-on-evict is on.
    Call forget_preview first to see what would go.
    """
    return await app(ctx).service.cleanup(scope, summary)


async def memory_stats(ctx: AppCtx, scope: SessionScope) -> MemoryStats:
    """How much this project remembers: counts and tokens per kind, pins, the limits in force,
    evictions and the recall hit rate since the server started."""
    return await app(ctx).service.stats(scope)
