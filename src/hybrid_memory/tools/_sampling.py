"""Eviction summaries written by the MCP client's own model, through sampling.

Each writing tool takes a ``summary`` parameter that resolvers fill, never the model.
The client is asked only when it declared the sampling capability and a dry run of
the write (``MemoryService.*_summary_request``) says the write would evict and
summarise; every other call costs nothing. Then:

- protocol 2026-07-28 and later: the resolver returns ``Sample(...)``; the framework
  answers the call with an ``InputRequiredResult``, the client samples its model and
  retries the call with the answer, and the resolvers run again (the dry run must
  ask the same question, or the client is asked anew). A client that refuses fails
  its own call: the protocol gives the server no say.
- older protocols: the request goes out mid-call from here, so a refusal or an error
  falls back instead of failing the write.

The tool hands the service a summarizer that answers with the sampled text for
exactly the memories it was written for; for anything else (a concurrent write
changed what goes) it answers None, and the lifecycle falls back to the configured
model, then to the extractive summary.

No ``from __future__ import annotations`` here: the resolvers are closures, and the
SDK reads their ``Annotated[..., Resolve(...)]`` annotations as objects.
"""

import logging
from collections.abc import Awaitable, Callable
from typing import Annotated, Any

from mcp.server.mcpserver import Context, Resolve, Sample
from mcp.shared.exceptions import MCPError
from mcp.shared.message import ServerMessageMetadata
from mcp_types import (
    CreateMessageRequest,
    CreateMessageRequestParams,
    CreateMessageResult,
    SamplingMessage,
    TextContent,
)
from mcp_types.version import is_version_at_least

from hybrid_memory.errors import HybridMemoryError
from hybrid_memory.models import MessageIn, NoteType
from hybrid_memory.service import summary
from hybrid_memory.service.lifecycle import Summarizer, SummaryRequest
from hybrid_memory.tools._common import SessionScope, app

logger = logging.getLogger(__name__)

INPUT_REQUIRED_VERSION = "2026-07-28"
"""From this protocol version on, a tool cannot send a request mid-call; it answers InputRequiredResult."""

Plan = Callable[..., Awaitable[SummaryRequest | None]]


def can_sample(ctx: Context[Any, Any]) -> bool:
    capabilities = ctx.client_capabilities
    return capabilities is not None and capabilities.sampling is not None


def _params(request: SummaryRequest) -> CreateMessageRequestParams:
    system, user = summary.prompt(request.lines, request.budget)
    return CreateMessageRequestParams(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=user))],
        max_tokens=request.budget,
        system_prompt=system,
        temperature=0.2,
    )


async def sample(
    ctx: Context[Any, Any], params: CreateMessageRequestParams, what: str
) -> Sample | CreateMessageResult | None:
    """Ask the client's model: by ``Sample`` on new protocols, mid-call on older ones (None when it fails)."""
    version = ctx.protocol_version
    if version is not None and is_version_at_least(version, INPUT_REQUIRED_VERSION):
        return Sample(
            params.messages,
            max_tokens=params.max_tokens,
            system_prompt=params.system_prompt,
            temperature=params.temperature,
        )
    if not ctx.session.can_send_request:
        return None
    try:
        result: CreateMessageResult = await ctx.session.send_request(
            CreateMessageRequest(params=params),
            CreateMessageResult,
            metadata=ServerMessageMetadata(related_request_id=ctx.request_id),
        )
    except MCPError as exc:
        logger.warning("the client did not sample %s (%s); using the fallback", what, exc)
        return None
    return result


def summary_resolver(plan: Plan) -> Resolve:
    """The ``Resolve`` of a tool's ``summary`` parameter, given the tool's dry run ``plan``."""

    async def ask(
        ctx: Context[Any, Any], request: Annotated[SummaryRequest | None, Resolve(plan)]
    ) -> Sample | CreateMessageResult | None:
        return None if request is None else await sample(ctx, _params(request), "an eviction summary")

    async def summarizer(
        request: Annotated[SummaryRequest | None, Resolve(plan)],
        sampled: Annotated[CreateMessageResult | None, Resolve(ask)],
    ) -> Summarizer | None:
        if request is None or sampled is None or not isinstance(sampled.content, TextContent):
            return None
        text = sampled.content.text.strip()
        return summary.precomputed(request, text) if text else None

    return Resolve(summarizer)


async def _thread_plan(
    ctx: Context[Any, Any],
    scope: SessionScope,
    thread_id: str,
    messages: list[MessageIn],
    private: bool,
    retention_days: float | None,
) -> SummaryRequest | None:
    if not can_sample(ctx):
        return None
    try:
        return await app(ctx).service.thread_summary_request(
            scope, thread_id, messages, private=private, retention_days=retention_days
        )
    except HybridMemoryError:  # the tool body reports it
        return None


async def _note_plan(
    ctx: Context[Any, Any],
    scope: SessionScope,
    content: str,
    type: NoteType,
    tags: list[str],
    importance: float | None,
    thread_id: str | None,
    force: bool,
    private: bool,
    retention_days: float | None,
) -> SummaryRequest | None:
    if not can_sample(ctx):
        return None
    try:
        return await app(ctx).service.note_summary_request(
            scope,
            content=content,
            type=type,
            tags=tags,
            importance=importance,
            thread_id=thread_id,
            force=force,
            private=private,
            retention_days=retention_days,
        )
    except HybridMemoryError:
        return None


async def _task_plan(
    ctx: Context[Any, Any],
    scope: SessionScope,
    description: str,
    outcome: str,
    success: bool,
    thread_id: str | None,
    tags: list[str],
    private: bool,
    retention_days: float | None,
) -> SummaryRequest | None:
    if not can_sample(ctx):
        return None
    try:
        return await app(ctx).service.task_summary_request(
            scope,
            description=description,
            outcome=outcome,
            success=success,
            thread_id=thread_id,
            tags=tags,
            private=private,
            retention_days=retention_days,
        )
    except HybridMemoryError:
        return None


async def _cleanup_plan(ctx: Context[Any, Any], scope: SessionScope) -> SummaryRequest | None:
    if not can_sample(ctx):
        return None
    try:
        return await app(ctx).service.lifecycle.summary_request(scope)
    except HybridMemoryError:
        return None


ThreadSummary = Annotated[Summarizer | None, summary_resolver(_thread_plan)]
"""remember_thread's eviction summary by the client's model; None: the service's own fallbacks."""
NoteSummary = Annotated[Summarizer | None, summary_resolver(_note_plan)]
TaskSummary = Annotated[Summarizer | None, summary_resolver(_task_plan)]
CleanupSummary = Annotated[Summarizer | None, summary_resolver(_cleanup_plan)]
