"""Every tool answers bad input with a clear error, keeps serving, and changes nothing."""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from tests.tools.helpers import call, call_error, snapshot

UNKNOWN = "00000000-0000-0000-0000-000000000000"
HUGE = "x" * 100_001


async def seed(client: Client) -> dict[str, str]:
    await call(
        client,
        "remember_thread",
        thread_id="t",
        messages=[{"role": "user", "content": "I like tea.", "id": "1"}],
    )
    a = await call(client, "create_note", content="The user likes tea.", type="preference")
    b = await call(client, "create_note", content="Tea has caffeine.", type="fact")
    await call(client, "create_link", from_id=a["id"], to_id=b["id"], relation="relates_to")
    return {"a": a["id"], "b": b["id"]}


# (tool, arguments, exact message or a fragment that must appear)
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("remember_thread", {"messages": [{"role": "user", "content": "hi"}]}, "thread_id: Field required"),
    ("remember_thread", {"thread_id": "t"}, "messages: Field required"),
    ("remember_thread", {"thread_id": "t", "messages": "hello"}, "Input should be a valid list"),
    (
        "remember_thread",
        {"thread_id": "t", "messages": []},
        "messages is empty. Pass the thread's messages as [{role, content}, ...].",
    ),
    (
        "remember_thread",
        {"thread_id": "  ", "messages": [{"role": "user", "content": "x"}]},
        "thread_id is empty. Pass a non-empty thread_id.",
    ),
    ("remember_thread", {"thread_id": "t", "messages": [{"content": "no role"}]}, "role: Field required"),
    (
        "remember_thread",
        {"thread_id": "t", "messages": [{"role": "user", "content": HUGE}]},
        "messages[0].content has 100,001 characters; the limit is 100,000. Split it into several notes or messages, or summarise it first.",
    ),
    ("recall_memory", {}, "query: Field required"),
    ("recall_memory", {"query": ""}, "query is empty: pass the words to search the memory for."),
    (
        "recall_memory",
        {"query": HUGE},
        "query has 100,001 characters; the limit is 100,000. Search for its key words instead.",
    ),
    ("recall_memory", {"query": "tea", "limit": 0}, "Input should be greater than or equal to 1"),
    ("recall_memory", {"query": "tea", "limit": "many"}, "Input should be a valid integer"),
    (
        "recall_memory",
        {"query": "tea", "kinds": ["dream"]},
        "Input should be 'message', 'note', 'summary' or 'task'",
    ),
    ("recall_memory", {"query": "tea", "as_of": "yesterday-ish"}, "Input should be a valid datetime"),
    ("recall_memory", {"query": "tea", "since": "last tuesday"}, "Input should be a valid datetime"),
    ("create_note", {"type": "fact"}, "content: Field required"),
    ("create_note", {"content": "   ", "type": "fact"}, "content is empty. Pass the text to remember."),
    (
        "create_note",
        {"content": HUGE, "type": "fact"},
        "content has 100,001 characters; the limit is 100,000. Split it into several notes or messages, or summarise it first.",
    ),
    (
        "create_note",
        {"content": "x", "type": "rumour"},
        "Input should be 'fact', 'preference', 'decision', 'insight', 'question' or 'concept'",
    ),
    (
        "create_note",
        {"content": "x", "type": "fact", "importance": 7},
        "Input should be less than or equal to 1",
    ),
    ("create_note", {"content": "x", "type": "fact", "tags": "tea"}, "Input should be a valid list"),
    (
        "create_link",
        {"from_id": "{a}", "to_id": UNKNOWN, "relation": "supports"},
        f"No note '{UNKNOWN}' in this project. create_note returns note ids; recall_memory(kinds=['note']) finds existing ones.",
    ),
    (
        "create_link",
        {"from_id": "{a}", "to_id": "{b}", "relation": "loves"},
        "Input should be 'extends', 'contradicts', 'supports', 'example_of', 'part_of', 'relates_to', 'answers', 'caused_by', 'temporal' or 'supersedes'",
    ),
    (
        "create_link",
        {"from_id": "{a}", "to_id": "{a}", "relation": "supports"},
        "from_id and to_id are the same note; a link joins two different notes.",
    ),
    (
        "create_link",
        {"from_id": "{a}", "to_id": "{b}", "relation": "supports", "strength": -1},
        "Input should be greater than or equal to 0",
    ),
    ("create_link", {"from_id": "{a}", "relation": "supports"}, "to_id: Field required"),
    (
        "get_linked_notes",
        {"note_id": UNKNOWN},
        f"No note '{UNKNOWN}' in this project. create_note returns note ids; recall_memory(kinds=['note']) finds existing ones.",
    ),
    ("get_linked_notes", {"note_id": "{a}", "depth": 9}, "Input should be less than or equal to 5"),
    (
        "get_linked_notes",
        {"note_id": "{a}", "direction": "sideways"},
        "Input should be 'out', 'in' or 'both'",
    ),
    ("get_linked_notes", {"note_id": "{a}", "relations": ["loves"]}, "Input should be 'extends'"),
    (
        "update_note",
        {"note_id": UNKNOWN, "content": "x"},
        f"No note '{UNKNOWN}' in this project. create_note returns note ids; recall_memory(kinds=['note']) finds existing ones.",
    ),
    (
        "update_note",
        {"note_id": "{a}"},
        "Nothing to update: pass at least one of content, type, tags, importance.",
    ),
    ("update_note", {"note_id": "{a}", "content": ""}, "content is empty. Pass the text to remember."),
    ("forget", {}, "Pass ids (memory or note ids from recall_memory) or a thread_id to forget."),
    (
        "forget",
        {"ids": [UNKNOWN]},
        f"Nothing to forget: no memory or note '{UNKNOWN}' in this project. recall_memory returns the ids you can forget.",
    ),
    ("list_threads", {"limit": 100000}, "Input should be less than or equal to 500"),
    (
        "pin_memory",
        {"memory_id": UNKNOWN},
        f"No memory or note '{UNKNOWN}' in this project. recall_memory and create_note return the ids you can pin.",
    ),
    (
        "unpin_memory",
        {"memory_id": "not-an-id"},
        "No memory or note 'not-an-id' in this project. recall_memory and create_note return the ids you can unpin.",
    ),
    ("pin_memory", {}, "memory_id: Field required"),
    ("get_memory_context", {}, "query: Field required"),
    ("get_memory_context", {"query": " "}, "query is empty: pass the words to search the memory for."),
    ("get_memory_context", {"query": "tea", "max_tokens": 0}, "Input should be greater than or equal to 1"),
    ("record_task", {"description": "x", "outcome": "y"}, "success: Field required"),
    (
        "record_task",
        {"description": "", "outcome": "y", "success": True},
        "description is empty. Pass the text to remember.",
    ),
    (
        "record_task",
        {"description": "x", "outcome": "y", "success": True, "retention_days": 0},
        "Input should be greater than 0",
    ),
    (
        "forget_preview",
        {"cursor": "abc"},
        "cursor 'abc' is not one forget_preview returned; omit it for the first page.",
    ),
    ("forget_preview", {"limit": 0}, "Input should be greater than or equal to 1"),
    ("create_note", {"content": "x", "type": "fact", "retention_days": -1}, "Input should be greater than 0"),
    (
        "remember_thread",
        {"thread_id": "t", "messages": [{"role": "user", "content": "x"}], "retention_days": "never"},
        "Input should be a valid number",
    ),
]


@pytest.mark.parametrize(
    ("tool", "arguments", "message"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)]
)
async def test_bad_input_is_rejected_clearly_and_changes_nothing(
    server: MCPServer[Any], tool: str, arguments: dict[str, Any], message: str
) -> None:
    async with Client(server) as client:
        ids = await seed(client)
        arguments = {
            k: ids.get(str(v).strip("{}"), v) if isinstance(v, str) else v for k, v in arguments.items()
        }
        before = await snapshot(client)
        error = await call_error(client, tool, **arguments)
        if message.startswith("Input should") or message.endswith(": Field required"):
            assert message in error  # pydantic's own words, inside our bounded framing
        else:
            assert error == f"Error executing tool {tool}: {message}"
        assert await snapshot(client) == before
        # and the server keeps serving
        assert (await call(client, "recall_memory", query="tea"))["results"]


async def test_unknown_tool_is_an_error_not_a_crash(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        error = await call_error(client, "delete_everything")
        assert "delete_everything" in error
        assert (await call(client, "list_threads"))["threads"] == []
