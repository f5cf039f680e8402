"""The protocol's own features over MCP: resources, the prompt, progress, logging, clean errors."""

from __future__ import annotations

import logging
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import (
    INVALID_PARAMS,
    ErrorData,
    LoggingMessageNotificationParams,
    TextContent,
    TextResourceContents,
)

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.server import build_server
from hybrid_memory.settings import LifecycleSettings
from hybrid_memory.tools.resources import MAX_RESOURCE_CHARS, bounded
from tests.conftest import make_settings
from tests.tools.helpers import call

THREAD = [
    {"role": "user", "content": "My daughter Mia starts school in September.", "id": "u1"},
    {"role": "assistant", "content": "Exciting! Which school did you choose?", "id": "a1"},
    {"role": "user", "content": "The Montessori school on Elm Street.", "id": "u2"},
]


async def protocol_error(request: Awaitable[object]) -> ErrorData:
    """The JSON-RPC error a request must fail with."""
    with pytest.raises(MCPError) as failed:
        await request
    return failed.value.error


async def read_text(client: Client, uri: str) -> str:
    result = await client.read_resource(uri)
    (content,) = result.contents
    assert isinstance(content, TextResourceContents)
    return content.text


async def test_resources_list_core_memory_and_templates_for_threads_and_notes(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        resources = await client.list_resources()
        templates = await client.list_resource_templates()
    assert [r.uri for r in resources.resources] == ["memory://core"]
    assert sorted(t.uri_template for t in templates.resource_templates) == [
        "memory://note/{note_id}",
        "memory://thread/{thread_id}",
    ]


async def test_core_memory_resource_lists_pinned_memories(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        assert await read_text(client, "memory://core") == (
            "No core memory yet: pin_memory moves a memory or note here."
        )
        note = await call(client, "create_note", content="The user's name is Ada.", type="fact")
        await call(client, "pin_memory", memory_id=note["id"])
        text = await read_text(client, "memory://core")
    assert text.startswith(f"[memory:{note['id']}] ")
    assert text.endswith(": The user's name is Ada.")


async def test_thread_resource_reads_the_messages_in_order(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        stored = await call(client, "remember_thread", thread_id="school", messages=THREAD)
        text = await read_text(client, "memory://thread/school")
    lines = text.splitlines()
    assert lines[0] == "thread school: 3 memories"
    assert [line.split("] ", 1)[0] for line in lines[1:]] == [f"[memory:{i}" for i in stored["memory_ids"]]
    assert lines[1].endswith(": My daughter Mia starts school in September.")
    assert " user " in lines[1]
    assert " assistant " in lines[2]


async def test_note_resource_shows_the_note_its_neighbours_and_links(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        a = await call(client, "create_note", content="Mia goes to the Montessori school.", type="fact")
        b = await call(client, "create_note", content="School starts in September.", type="fact")
        await call(client, "create_link", from_id=b["id"], to_id=a["id"], relation="part_of")
        text = await read_text(client, f"memory://note/{a['id']}")
    assert text.splitlines() == [
        f"[memory:{a['id']}] fact: Mia goes to the Montessori school.",
        "linked notes:",
        f"[memory:{b['id']}] fact: School starts in September.",
        "links:",
        f"{b['id']} -part_of-> {a['id']} (1)",
    ]


async def test_unknown_note_or_thread_resource_is_invalid_params_without_a_traceback(
    server: MCPServer[Any], caplog: pytest.LogCaptureFixture
) -> None:
    async with Client(server) as client:
        note_error = await protocol_error(client.read_resource("memory://note/n-missing"))
        thread_error = await protocol_error(client.read_resource("memory://thread/nowhere"))
    assert (note_error.code, note_error.message) == (
        INVALID_PARAMS,
        "No note 'n-missing' in this project. create_note returns note ids; "
        "recall_memory(kinds=['note']) finds existing ones.",
    )
    assert (thread_error.code, thread_error.message) == (
        INVALID_PARAMS,
        "No thread 'nowhere' in this project. list_threads returns thread ids.",
    )
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


def test_bounded_text_stops_at_the_limit_and_says_how_to_read_the_rest() -> None:
    lines = [f"line {i:04d} " + "x" * 90 for i in range(1000)]  # 100 characters and a newline each
    text = bounded(lines, "recall_memory finds the rest")
    assert len(text) <= MAX_RESOURCE_CHARS + 100
    assert text.splitlines()[-1] == "[604 more not shown: recall_memory finds the rest]"
    huge = bounded(["y" * 100_000], "read it a page at a time", limit=1000)
    assert huge.splitlines() == ["y" * 800 + " …", "[0 more not shown: read it a page at a time]"]


async def test_memory_context_prompt_builds_one_cited_message(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        stored = await call(client, "remember_thread", thread_id="school", messages=THREAD)
        prompts = await client.list_prompts()
        result = await client.get_prompt("memory_context", {"query": "which school does Mia attend?"})
    assert [p.name for p in prompts.prompts] == ["memory_context", "distill_thread"]
    prompt = prompts.prompts[0]
    assert [(a.name, a.required) for a in prompt.arguments or []] == [("query", True), ("thread_id", False)]
    (message,) = result.messages
    assert message.role == "user"
    assert isinstance(message.content, TextContent)
    assert message.content.text.startswith("What long-term memory holds about: which school does Mia attend?")
    assert f"[memory:{stored['memory_ids'][2]}]" in message.content.text


async def test_unknown_prompt_or_missing_argument_is_invalid_params_without_a_traceback(
    server: MCPServer[Any], caplog: pytest.LogCaptureFixture
) -> None:
    async with Client(server) as client:
        unknown = await protocol_error(client.get_prompt("summarize_everything"))
        missing = await protocol_error(client.get_prompt("memory_context", {}))
    assert (unknown.code, unknown.message) == (
        INVALID_PARAMS,
        "No prompt 'summarize_everything'. Prompts: memory_context, distill_thread.",
    )
    assert missing.code == INVALID_PARAMS
    assert "query" in missing.message
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]


async def test_remember_thread_reports_progress_per_batch_embedded(server: MCPServer[Any]) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    messages = [
        {"role": "user", "content": f"Fact number {i} about the garden.", "id": f"m{i}"} for i in range(20)
    ]
    async with Client(server) as client:
        result = await client.call_tool(
            "remember_thread", {"thread_id": "garden", "messages": messages}, progress_callback=on_progress
        )
    assert not result.is_error
    assert seen == [(16, 20, "memories embedded"), (20, 20, "memories embedded")]


async def test_modern_client_asking_per_request_receives_log_records_at_its_level(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="hybrid_memory")  # the server's own level: HYBRID_MEMORY_LOG_LEVEL
    settings = make_settings(tmp_path, lifecycle=LifecycleSettings(max_items=2, summarize_on_evict=False))
    server = build_server(settings, embedder=embedder)
    logs: list[LoggingMessageNotificationParams] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async with Client(server, logging_callback=on_log, log_level="warning") as quiet:
        await call(quiet, "remember_thread", thread_id="t", messages=THREAD[:2])
    async with Client(server, logging_callback=on_log, log_level="info") as told:
        await call(told, "remember_thread", thread_id="t", messages=THREAD)
    assert [(p.level, p.data) for p in logs] == [("info", "evicted 1 memories of project test")]


async def test_cleanup_reports_progress_and_evictions_reach_a_client_that_set_a_level(
    tmp_path: Path, embedder: Embedder, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="hybrid_memory")
    settings = make_settings(tmp_path, lifecycle=LifecycleSettings(max_items=2, summarize_on_evict=False))
    server = build_server(settings, embedder=embedder)
    logs: list[LoggingMessageNotificationParams] = []
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_log(params: LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        seen.append((done, total, message))

    # A handshake-era connection, where logging/setLevel decides what the client receives.
    async with Client(server, logging_callback=on_log, mode="legacy") as client:
        with pytest.warns(MCPDeprecationWarning):
            await client.set_logging_level("info")
        await call(client, "remember_thread", thread_id="t", messages=THREAD)
        result = await client.call_tool("cleanup_memory", {}, progress_callback=on_progress)
    assert not result.is_error
    assert [(p.level, p.logger, p.data) for p in logs] == [
        ("info", "hybrid_memory.service.lifecycle.lifecycle", "evicted 1 memories of project test")
    ]
    assert seen == [
        (0, 3, "planning"),
        (1, 3, "deleting 0 expired memories"),
        (2, 3, "evicting 0 memories"),
        (3, 3, "done"),
    ]
