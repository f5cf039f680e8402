"""Every tool a client sees is built by the registry: presented, behind the error mapping, lean schema."""

from __future__ import annotations

from mcp import Client
from mcp.server.mcpserver import MCPServer

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.models import RecallResult
from hybrid_memory.server import AppContext, build_server
from hybrid_memory.settings import Settings
from hybrid_memory.tools._common import ERRORS_MAPPED
from hybrid_memory.tools.registry import TOOLS, build_tools

CORE = ["recall_memory", "read_memory", "remember_thread", "create_note", "create_link", "get_linked_notes"]


def test_every_built_tool_is_behind_the_error_mapping() -> None:
    tools = build_tools()
    assert [t.name for t in tools] == [spec.fn.__name__ for spec in TOOLS]
    assert [t.name for t in tools if not getattr(t.fn, ERRORS_MAPPED, False)] == []
    assert len(tools) == 21


async def test_the_built_server_lists_exactly_the_registry(server: MCPServer[AppContext]) -> None:
    async with Client(server) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
    assert listed == [spec.fn.__name__ for spec in TOOLS]


async def test_the_core_setting_lists_only_the_core_tools(settings: Settings, embedder: Embedder) -> None:
    core = build_server(settings.model_copy(update={"tools": "core"}), embedder=embedder)
    async with Client(core) as client:
        listed = [t.name for t in (await client.list_tools()).tools]
    assert listed == CORE


async def test_the_output_schema_is_the_result_model_and_inputs_carry_no_titles(
    server: MCPServer[AppContext],
) -> None:
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    recall = tools["recall_memory"]
    assert recall.output_schema is not None
    assert set(recall.output_schema["properties"]) == set(RecallResult.model_json_schema()["properties"])
    schemas = str([t.input_schema for t in tools.values()])
    assert "'title'" not in schemas
    assert "$ref" not in schemas
    assert recall.input_schema["properties"]["kinds"]["items"]["enum"] == [
        "message",
        "note",
        "summary",
        "task",
    ]


def test_a_tool_module_leaves_the_error_mapping_to_the_registry() -> None:
    assert [spec.fn.__name__ for spec in TOOLS if getattr(spec.fn, ERRORS_MAPPED, False)] == []
