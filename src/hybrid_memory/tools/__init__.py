"""The MCP tools: module-level functions that validate, call MemoryService, and return typed results.

Every tool is listed once in :data:`TOOLS`, in the order clients see them;
:func:`register_tools` registers each with its hints and wraps it in
:func:`~hybrid_memory.tools._common.tool_errors` on the way, so no tool can miss
the error mapping.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import ToolAnnotations

from hybrid_memory.tools import forget, knowledge, lifecycle, notes, recall, threads
from hybrid_memory.tools._common import tool_errors
from hybrid_memory.tools.context import AppContext, AppCtx

READ_ONLY = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
IDEMPOTENT_WRITE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)
DESTRUCTIVE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False
)


@dataclass(frozen=True)
class ToolSpec:
    """One tool: its function (name, docstring and signature make the MCP tool) and its hints."""

    fn: Callable[..., Any]
    annotations: ToolAnnotations


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(recall.recall_memory, READ_ONLY),
    ToolSpec(threads.remember_thread, IDEMPOTENT_WRITE),
    ToolSpec(threads.list_threads, READ_ONLY),
    ToolSpec(notes.create_note, WRITE),
    ToolSpec(notes.update_note, IDEMPOTENT_WRITE),
    ToolSpec(notes.create_link, IDEMPOTENT_WRITE),
    ToolSpec(notes.get_linked_notes, READ_ONLY),
    ToolSpec(forget.forget, DESTRUCTIVE),
    ToolSpec(lifecycle.pin_memory, IDEMPOTENT_WRITE),
    ToolSpec(lifecycle.unpin_memory, IDEMPOTENT_WRITE),
    ToolSpec(lifecycle.get_memory_context, READ_ONLY),
    ToolSpec(lifecycle.record_task, WRITE),
    ToolSpec(lifecycle.forget_preview, READ_ONLY),
    ToolSpec(lifecycle.cleanup_memory, DESTRUCTIVE),
    ToolSpec(lifecycle.memory_stats, READ_ONLY),
    ToolSpec(knowledge.rate_memory, IDEMPOTENT_WRITE),
    ToolSpec(knowledge.summarize_thread, IDEMPOTENT_WRITE),
    ToolSpec(knowledge.map_notes, READ_ONLY),
    ToolSpec(knowledge.distill_thread, WRITE),
    ToolSpec(knowledge.consolidate_notes, WRITE),
)


def register_tools(server: MCPServer[Any]) -> None:
    """Register every tool of :data:`TOOLS`, each behind the one error mapping."""
    for spec in TOOLS:
        server.add_tool(tool_errors(spec.fn), annotations=spec.annotations)
    knowledge.register_prompts(server)


__all__ = ["TOOLS", "AppContext", "AppCtx", "ToolSpec", "register_tools"]
