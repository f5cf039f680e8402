"""Prompts a client can offer its user: memory context, and distillation for clients without sampling."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import InputRequiredResult

from hybrid_memory.tools._common import session_scope
from hybrid_memory.tools.app import AppCtx, app

PROMPT_MAX_TOKENS = 1500


async def memory_context(query: str, ctx: AppCtx, thread_id: str | None = None) -> str | InputRequiredResult:
    """What memory knows about `query`: core memory, the thread's latest messages, recalled memories.

    One message to start a conversation with, within about 1,500 tokens, each line citing
    its source as [memory:<id>].
    """
    scope = await session_scope(ctx)
    if isinstance(scope, InputRequiredResult):
        return scope
    context = await app(ctx).service.memory_context(
        scope, query, thread_id=thread_id, max_tokens=PROMPT_MAX_TOKENS
    )
    if not context.text:
        return f"Memory has nothing on: {query}"
    return (
        f"What long-term memory holds about: {query}\n\n{context.text}\n\n"
        "Cite a memory as [memory:<id>] when you use it."
    )


async def distill_thread_prompt(thread_id: str, ctx: AppCtx) -> str | InputRequiredResult:
    """Hand the agent a thread's messages and ask it to store them as linked, cited notes."""
    scope = await session_scope(ctx)
    if isinstance(scope, InputRequiredResult):
        return scope
    return await app(ctx).service.knowledge.distill_prompt(scope, thread_id)


def register_prompts(server: MCPServer[Any]) -> None:
    server.prompt(title="Memory context")(memory_context)
    # The prompt form of distillation, for clients without sampling.
    server.prompt(name="distill_thread", title="Distill a thread into notes")(distill_thread_prompt)
