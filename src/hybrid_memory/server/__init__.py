"""The MCP server: construction and transports.

Its names load on first use: :mod:`.opening` (what a host starts before anything else) imports
no part of the MCP SDK, and importing it must not import the SDK through this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hybrid_memory.server.app import build_server, open_app
    from hybrid_memory.tools.app import AppContext

__all__ = ["AppContext", "build_server", "open_app"]


def __getattr__(name: str) -> Any:
    if name in ("build_server", "open_app"):
        from hybrid_memory.server import app

        return getattr(app, name)
    if name == "AppContext":
        from hybrid_memory.tools.app import AppContext

        return AppContext
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
