"""From conversations to knowledge: feedback, thread summaries, the graph map, distillation, consolidation."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from hybrid_memory.models.knowledge import GraphMap, RateResult, Rating, ThreadSummaryResult
from hybrid_memory.tools._common import IDEMPOTENT_WRITE, READ_ONLY, SessionScope, app, tool_errors


def register(server: MCPServer[Any]) -> None:
    @server.tool(annotations=IDEMPOTENT_WRITE)
    @tool_errors
    async def rate_memory(
        memory_id: Annotated[str, Field(description="A memory or note id from recall_memory")],
        rating: Annotated[Rating, Field(description="useful, wrong or outdated")],
        ctx: Context[Any, Any],
        scope: SessionScope,
    ) -> RateResult:
        """Feedback on a recalled memory: useful ranks it higher; wrong and outdated hide it from recall."""
        return await app(ctx).service.knowledge.rate(scope, memory_id, rating)

    @server.tool(annotations=IDEMPOTENT_WRITE)
    @tool_errors
    async def summarize_thread(
        thread_id: Annotated[str, Field(description="A remembered thread")],
        ctx: Context[Any, Any],
        scope: SessionScope,
    ) -> ThreadSummaryResult:
        """Write or refresh a thread's summary memory (recall finds it); long threads get one anyway."""
        return await app(ctx).service.knowledge.summarize_thread(scope, thread_id)

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    async def map_notes(
        ctx: Context[Any, Any],
        scope: SessionScope,
        limit: Annotated[int, Field(ge=1, le=50, description="At most this many of each list")] = 10,
        max_tokens: Annotated[int, Field(ge=200, le=20_000, description="Answer size cap")] = 2_000,
    ) -> GraphMap:
        """Orient in the knowledge graph: hubs (most linked notes), clusters with labels, orphans."""
        return await app(ctx).service.knowledge.map(scope, limit=limit, max_tokens=max_tokens)
