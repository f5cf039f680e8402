"""The MCP tools: thin functions that validate, call MemoryService, and return typed results."""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer

from hybrid_memory.tools import forget, knowledge, lifecycle, notes, recall, threads


def register_tools(server: MCPServer[Any]) -> None:
    for module in (recall, threads, notes, forget, lifecycle, knowledge):
        module.register(server)
