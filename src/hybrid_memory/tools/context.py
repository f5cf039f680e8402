"""The application context every tool receives, owned here so the server depends on tools, not back."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mcp.server.mcpserver import Context

from hybrid_memory.models import Scope
from hybrid_memory.service import MemoryService


@dataclass(frozen=True)
class AppContext:
    """What every tool receives through ``ctx.request_context.lifespan_context``."""

    service: MemoryService
    scope: Scope
    """The configured scope; without HYBRID_MEMORY_PROJECT its project is ``default``."""
    project_from_roots: bool = False
    """No project configured: each session's project comes from the client's first MCP root."""


AppCtx = Context[AppContext, Any]
"""A tool's ``ctx``: the SDK's context over our lifespan's AppContext (any request type)."""


def app(ctx: AppCtx) -> AppContext:
    return ctx.request_context.lifespan_context
