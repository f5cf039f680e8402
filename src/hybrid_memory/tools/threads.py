"""Conversation threads: remember them, list them."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hybrid_memory.models import MessageIn, RememberResult, ThreadList
from hybrid_memory.tools._common import SessionScope
from hybrid_memory.tools._sampling import ThreadWrite
from hybrid_memory.tools.context import AppCtx, app


async def remember_thread(
    thread_id: Annotated[
        str, Field(description="Your id for this conversation (session); reuse it to add to it")
    ],
    messages: Annotated[
        list[MessageIn],
        Field(description="The conversation's messages in order: [{role, content, id?, created_at?}, ...]"),
    ],
    ctx: AppCtx,
    scope: SessionScope,
    write: ThreadWrite,
    private: Annotated[bool, Field(description="Keep these messages out of exports")] = False,
    retention_days: Annotated[
        float | None, Field(gt=0, le=36500, description="Delete them after this many days")
    ] = None,
) -> RememberResult:
    """Remember a conversation so later sessions can recall it.

    Keeps user and assistant messages (system prompts, tool calls, tool results and
    thinking are skipped and counted). Long messages are split into overlapping chunks.
    Safe to call again with the same or a longer thread: messages already remembered
    are not stored twice (give each message an `id` to make this exact). Secrets (API keys,
    tokens, passwords, private keys) are replaced by [REDACTED:...] before anything is
    stored; `redacted` says how many. When the project has limits, the oldest or least
    used memories are summarised and evicted; `evicted` says how many.
    """
    # The arguments above reach the service as write.command, a ThreadDraft the SDK builds from them.
    return await app(ctx).service.remember_thread(scope, write.command, summarizer=write.summarizer)


async def list_threads(
    ctx: AppCtx,
    scope: SessionScope,
    limit: Annotated[int, Field(ge=1, le=500, description="At most this many threads")] = 50,
    offset: Annotated[
        int, Field(ge=0, le=10_000, description="Skip this many (next_offset of the previous page)")
    ] = 0,
) -> ThreadList:
    """List remembered conversation threads with how many memories each holds, largest first.

    Pages: pass the result's `next_offset` as `offset` for the next page; it is null on the last one.
    """
    return await app(ctx).service.list_threads(scope, limit, offset)
