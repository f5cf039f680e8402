"""Every tool a client sees is registered through ``register_tools``, behind the error mapping."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from hybrid_memory.tools import TOOLS, register_tools
from hybrid_memory.tools._common import ERRORS_MAPPED
from hybrid_memory.tools.context import AppContext


class RecordingServer(MCPServer[Any]):
    """A real server that also keeps every function handed to ``add_tool``."""

    def __init__(self) -> None:
        super().__init__("recording")
        self.added: list[Callable[..., Any]] = []

    def add_tool(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self.added.append(fn)
        super().add_tool(fn, *args, **kwargs)


async def test_every_listed_tool_is_registered_through_the_registry_behind_the_error_mapping() -> None:
    server = RecordingServer()
    register_tools(server)
    async with Client(server) as client:
        listed = [t.name for t in (await client.list_tools()).tools]

    assert sorted(fn.__name__ for fn in server.added) == sorted(listed)
    assert [fn.__name__ for fn in server.added if not getattr(fn, ERRORS_MAPPED, False)] == []
    assert [spec.fn.__name__ for spec in TOOLS] == listed
    assert len(listed) == 20


async def test_the_built_server_lists_exactly_the_registry(server: MCPServer[AppContext]) -> None:
    async with Client(server) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
    assert listed == [spec.fn.__name__ for spec in TOOLS]


async def test_a_tool_module_leaves_the_error_mapping_to_the_registry() -> None:
    assert [spec.fn.__name__ for spec in TOOLS if getattr(spec.fn, ERRORS_MAPPED, False)] == []
