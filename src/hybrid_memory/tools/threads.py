"""Conversation threads: remember them, list them."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hybrid_memory.models import MessageIn, RememberResult, ThreadList
from hybrid_memory.service.knowledge import HARVEST_META
from hybrid_memory.tools._common import MaxTokens, RetentionDays, SessionScope
from hybrid_memory.tools._sampling import ThreadWrite
from hybrid_memory.tools.app import AppCtx, app
from hybrid_memory.tools.budget import DEFAULT_TOKENS

"""``_meta`` key of a remember_thread call that captures a coding session (see integrations/capture.py)."""


async def remember_thread(
    thread_id: Annotated[str, Field(description="reuse it to add to the thread")],
    messages: Annotated[
        list[MessageIn], Field(description="in order; OpenAI or Anthropic format; give each an id")
    ],
    ctx: AppCtx,
    scope: SessionScope,
    write: ThreadWrite,
    private: Annotated[bool, Field(description="never exported")] = False,
    retention_days: RetentionDays = None,
) -> RememberResult:
    """Store a conversation's user and assistant messages for later sessions; idempotent.

    Other roles, tool calls and thinking are skipped and counted; secrets are redacted.
    """
    # The arguments above reach the service as write.command, a ThreadDraft the SDK builds from them.
    # A capture (the plugin's hooks, import-transcript) says so in _meta, out of the model's sight.
    meta = ctx.request_context.meta or {}
    return await app(ctx).service.remember_thread(
        scope, write.command, summarizer=write.summarizer, harvest=meta.get(HARVEST_META) is True
    )


async def list_threads(
    ctx: AppCtx,
    scope: SessionScope,
    limit: Annotated[int, Field(ge=1, le=500)] = 50,
    offset: Annotated[int, Field(ge=0, le=10_000)] = 0,
    max_tokens: MaxTokens = DEFAULT_TOKENS,
) -> ThreadList:
    """List remembered threads, largest first, with their memory counts."""
    return await app(ctx).service.list_threads(scope, limit, offset)
