"""The registry of MCP tools: each tool listed once, in the order clients see them.

:func:`build_tools` makes each an MCP tool with its hints, answering through
:func:`~hybrid_memory.tools._present.presented` (bounded structured content plus a
compact text rendering) and behind :func:`~hybrid_memory.tools._common.tool_errors`,
so no tool can miss either; its input schema is made lean for the model
(:mod:`~hybrid_memory.tools._schema`). Imported when the tools are first listed or
called, not for the handshake: it pulls in every tool and the models they declare.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from mcp.server.mcpserver.tools import Tool
from mcp_types import ToolAnnotations

from hybrid_memory.tools import forget, housekeeping, knowledge, notes, read, recall, threads
from hybrid_memory.tools._common import tool_errors
from hybrid_memory.tools._present import presented
from hybrid_memory.tools._schema import lean, lean_output
from hybrid_memory.tools.app import AppContext, AppCtx

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
    core: bool = False
    """In the small set ``HYBRID_MEMORY_TOOLS=core`` exposes."""


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(recall.recall_memory, READ_ONLY, core=True),
    ToolSpec(read.read_memory, READ_ONLY, core=True),
    ToolSpec(threads.remember_thread, IDEMPOTENT_WRITE, core=True),
    ToolSpec(threads.list_threads, READ_ONLY),
    ToolSpec(notes.create_note, WRITE, core=True),
    ToolSpec(notes.update_note, IDEMPOTENT_WRITE),
    ToolSpec(notes.create_link, IDEMPOTENT_WRITE, core=True),
    ToolSpec(notes.get_linked_notes, READ_ONLY, core=True),
    ToolSpec(forget.forget, DESTRUCTIVE),
    ToolSpec(housekeeping.pin_memory, IDEMPOTENT_WRITE),
    ToolSpec(housekeeping.unpin_memory, IDEMPOTENT_WRITE),
    ToolSpec(housekeeping.get_memory_context, READ_ONLY),
    ToolSpec(housekeeping.record_task, WRITE),
    ToolSpec(housekeeping.forget_preview, READ_ONLY),
    ToolSpec(housekeeping.cleanup_memory, DESTRUCTIVE),
    ToolSpec(housekeeping.memory_stats, READ_ONLY),
    ToolSpec(knowledge.rate_memory, IDEMPOTENT_WRITE),
    ToolSpec(knowledge.summarize_thread, IDEMPOTENT_WRITE),
    ToolSpec(knowledge.map_notes, READ_ONLY),
    ToolSpec(knowledge.distill_thread, WRITE),
    ToolSpec(knowledge.consolidate_notes, WRITE),
)


ToolSet = Literal["all", "core"]


def build_tool(spec: ToolSpec) -> Tool:
    """One tool of the registry as the server lists it: presented, error-mapped, lean schema."""
    description = inspect.cleandoc(spec.fn.__doc__ or "")
    tool = Tool.from_function(
        tool_errors(presented(spec.fn)), description=description, annotations=spec.annotations
    )
    tool.parameters = lean(tool.parameters)
    if tool.output_schema is not None:
        tool.output_schema = lean_output(tool.output_schema)
    return tool


def build_tools(selection: ToolSet = "all") -> list[Tool]:
    """The tools of :data:`TOOLS` (only the core ones for ``"core"``), for ``MCPServer(tools=...)``."""
    return [build_tool(spec) for spec in TOOLS if selection == "all" or spec.core]


__all__ = ["TOOLS", "AppContext", "AppCtx", "ToolSet", "ToolSpec", "build_tool", "build_tools"]
