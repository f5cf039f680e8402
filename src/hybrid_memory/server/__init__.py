"""The MCP server: construction and transports."""

from hybrid_memory.server.app import AppContext, build_server, open_app

__all__ = ["AppContext", "build_server", "open_app"]
