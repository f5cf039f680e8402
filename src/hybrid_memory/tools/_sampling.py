"""Eviction summaries written by the MCP client's own model, through sampling.

Each writing tool takes a ``write`` parameter that resolvers fill, never the model:
the tool's draft, or the plan of its dry run, with a summarizer. The client is asked
only when it declared the sampling capability and the dry run of the write
(``MemoryService.plan_*``) says the write would evict and summarise; the write then
executes the dry run's plan, so nothing is prepared twice. Then:

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
from dataclasses import dataclass
from typing import Annotated, Any, Generic, TypeVar

from mcp.server.mcpserver import Resolve, Sample
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
from hybrid_memory.models import Scope
from hybrid_memory.service import MemoryService
from hybrid_memory.service.lifecycle import eviction_summary
from hybrid_memory.service.lifecycle.lifecycle import Summarizer, SummaryRequest
from hybrid_memory.service.writes.drafts import DryRun, NoteDraft, TaskDraft, ThreadDraft
from hybrid_memory.service.writes.notes import NotePlan
from hybrid_memory.service.writes.tasks import TaskPlan
from hybrid_memory.service.writes.threads import ThreadPlan
from hybrid_memory.tools._common import SessionScope
from hybrid_memory.tools.app import AppCtx, app

logger = logging.getLogger(__name__)

INPUT_REQUIRED_VERSION = "2026-07-28"
"""From this protocol version on, a tool cannot send a request mid-call; it answers InputRequiredResult."""

Plan = Callable[..., Awaitable[SummaryRequest | None]]
D = TypeVar("D")
P = TypeVar("P")
DryRunOf = Callable[[MemoryService, Scope, D], Awaitable[DryRun[P]]]
"""A ``MemoryService.plan_*`` method: prepare a draft's write and say what it would evict."""


def can_sample(ctx: AppCtx) -> bool:
    capabilities = ctx.client_capabilities
    return capabilities is not None and capabilities.sampling is not None


def _params(request: SummaryRequest) -> CreateMessageRequestParams:
    system, user = eviction_summary.prompt(request.lines, request.budget)
    return CreateMessageRequestParams(
        messages=[SamplingMessage(role="user", content=TextContent(type="text", text=user))],
        max_tokens=request.budget,
        system_prompt=system,
        temperature=0.2,
    )


async def sample(
    ctx: AppCtx, params: CreateMessageRequestParams, what: str
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
        ctx: AppCtx, request: Annotated[SummaryRequest | None, Resolve(plan)]
    ) -> Sample | CreateMessageResult | None:
        return None if request is None else await sample(ctx, _params(request), "an eviction summary")

    async def summarizer(
        request: Annotated[SummaryRequest | None, Resolve(plan)],
        sampled: Annotated[CreateMessageResult | None, Resolve(ask)],
    ) -> Summarizer | None:
        if request is None or sampled is None or not isinstance(sampled.content, TextContent):
            return None
        text = sampled.content.text.strip()
        return eviction_summary.precomputed(request, text) if text else None

    return Resolve(summarizer)


@dataclass(frozen=True)
class Write(Generic[D, P]):
    """What a writing tool hands the service: the dry run's plan when one ran, else the draft."""

    command: D | P
    summarizer: Summarizer | None
    """The client model's eviction summary; None: the service's own fallbacks."""


def write_resolver(draft_type: type[D], dry_run: DryRunOf[D, P]) -> Resolve:
    """The ``Resolve`` of a writing tool's ``write`` parameter.

    The draft is built once, by the SDK: ``draft_type`` itself is the resolver, and
    its fields, named like the tool's arguments, are filled by name. With a client
    that can sample, ``dry_run`` prepares the write and says what it would evict;
    the write then executes that plan rather than preparing it again.
    """
    draft_resolve = Resolve(draft_type)

    async def plan(
        ctx: AppCtx, scope: SessionScope, draft: Annotated[Any, draft_resolve]
    ) -> DryRun[P] | None:
        if not can_sample(ctx):
            return None
        try:
            return await dry_run(app(ctx).service, scope, draft)
        except HybridMemoryError:  # the write reports it
            return None

    async def request(dry: Annotated[DryRun[P] | None, Resolve(plan)]) -> SummaryRequest | None:
        return None if dry is None else dry.summary

    async def write(
        draft: Annotated[Any, draft_resolve],
        dry: Annotated[DryRun[P] | None, Resolve(plan)],
        summarizer: Annotated[Summarizer | None, summary_resolver(request)],
    ) -> Write[D, P]:
        return Write(draft if dry is None else dry.plan, summarizer)

    return Resolve(write)


async def _cleanup_plan(ctx: AppCtx, scope: SessionScope) -> SummaryRequest | None:
    if not can_sample(ctx):
        return None
    try:
        return await app(ctx).service.cleanup_summary_request(scope)
    except HybridMemoryError:
        return None


ThreadWrite = Annotated[
    Write[ThreadDraft, ThreadPlan], write_resolver(ThreadDraft, MemoryService.plan_thread)
]
NoteWrite = Annotated[Write[NoteDraft, NotePlan], write_resolver(NoteDraft, MemoryService.plan_note)]
TaskWrite = Annotated[Write[TaskDraft, TaskPlan], write_resolver(TaskDraft, MemoryService.plan_task)]
CleanupSummary = Annotated[Summarizer | None, summary_resolver(_cleanup_plan)]
