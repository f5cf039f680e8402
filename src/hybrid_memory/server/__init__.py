"""The MCP server: construction and transports."""

from hybrid_memory.server.app import build_server, open_app
from hybrid_memory.tools.app import AppContext

__all__ = ["AppContext", "build_server", "open_app"]
