"""From conversations to knowledge: feedback, thread summaries, the graph map, distillation, consolidation.

No ``from __future__ import annotations``: the SDK reads the sampling resolvers'
``Annotated[..., Resolve(...)]`` annotations as objects.
"""

from typing import Annotated

from mcp.server.mcpserver import Resolve, Sample
from mcp_types import (
    CreateMessageRequestParams,
    CreateMessageResult,
    SamplingMessage,
    TextContent,
)
from pydantic import Field

from hybrid_memory.errors import HybridMemoryError
from hybrid_memory.models import knowledge as results
from hybrid_memory.service.knowledge.distill import DistillRequest
from hybrid_memory.tools._common import SessionScope
from hybrid_memory.tools._sampling import can_sample, sample
from hybrid_memory.tools.app import AppCtx, app

ThreadId = str


async def _distill_plan(ctx: AppCtx, scope: SessionScope, thread_id: str) -> DistillRequest | None:
    if not can_sample(ctx):
        return None
    try:
        return await app(ctx).service.knowledge.distill_request(scope, thread_id)
    except HybridMemoryError:  # the tool body reports it
        return None


async def _distill_ask(
    ctx: AppCtx, request: Annotated[DistillRequest | None, Resolve(_distill_plan)]
) -> Sample | CreateMessageResult | None:
    """The client's model distils the thread: mid-call on older protocols, by InputRequired on newer."""
    if request is None:
        return None
    messages = [SamplingMessage(role="user", content=TextContent(type="text", text=request.user))]
    params = CreateMessageRequestParams(
        messages=messages, max_tokens=request.max_tokens, system_prompt=request.system, temperature=0.0
    )
    return await sample(ctx, params, "a distillation")


def _sampled_text(sampled: Annotated[CreateMessageResult | None, Resolve(_distill_ask)]) -> str | None:
    if sampled is None or not isinstance(sampled.content, TextContent):
        return None
    return sampled.content.text


Sampled = Annotated[str | None, Resolve(_sampled_text)]


async def rate_memory(
    memory_id: str,
    rating: results.Rating,
    ctx: AppCtx,
    scope: SessionScope,
) -> results.RateResult:
    """Rate a recalled memory: useful ranks it higher, wrong and outdated hide it."""
    return await app(ctx).service.knowledge.rate(scope, memory_id, rating)


async def summarize_thread(
    thread_id: ThreadId,
    ctx: AppCtx,
    scope: SessionScope,
) -> results.ThreadSummaryResult:
    """Write or refresh a thread's summary memory (recallable)."""
    return await app(ctx).service.knowledge.summarize_thread(scope, thread_id)


async def map_notes(
    ctx: AppCtx,
    scope: SessionScope,
    limit: Annotated[int, Field(ge=1, le=50)] = 10,
    max_tokens: Annotated[int, Field(ge=200, le=8_000)] = 2_000,
) -> results.GraphMap:
    """The note graph at a glance: hubs, labelled clusters, orphans."""
    return await app(ctx).service.knowledge.map(scope, limit=limit, max_tokens=max_tokens)


async def distill_thread(
    thread_id: ThreadId, ctx: AppCtx, scope: SessionScope, sampled: Sampled
) -> results.DistillResult:
    """Turn a thread into cited, linked notes with your model (sampling); else use prompt distill_thread."""
    service = app(ctx).service
    return await service.knowledge.distill(scope, service, thread_id, sampled)


async def consolidate_notes(
    ctx: AppCtx,
    scope: SessionScope,
    apply: bool = False,
) -> results.ConsolidationResult:
    """Merge near-duplicate notes, supersede changed ones; a dry run unless apply=true."""
    service = app(ctx).service
    return await service.knowledge.consolidate(scope, service, apply=apply)
