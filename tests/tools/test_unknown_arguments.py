"""A misspelled or invented argument is refused with the valid names; nothing is stored or filtered."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from tests.tools.helpers import call


async def test_a_misspelled_filter_is_refused_with_the_valid_argument_names(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="t", messages=[{"role": "user", "content": "Kiwi."}])
        refused = await client.call_tool("recall_memory", {"query": "kiwi", "kind": ["note"]})
        still = await call(client, "recall_memory", query="kiwi")

    assert refused.is_error
    assert refused.content[0].text == (  # type: ignore[union-attr]
        "recall_memory has no argument 'kind'. Its arguments: query, thread_id, limit, kinds, note_types, "
        "tags, since, until, as_of, include_invalid, explain, max_tokens, min_score, with_context."
    )
    assert [hit["text"] for hit in still["results"]] == ["Kiwi."]


async def test_invented_arguments_on_a_write_store_nothing(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        refused = await client.call_tool(
            "create_note", {"content": "Tea, not coffee.", "type": "preference", "confidence": 0.9}
        )
        threads = await call(client, "recall_memory", query="tea coffee", kinds=["note"])

    assert refused.is_error
    assert refused.content[0].text.startswith("create_note has no argument 'confidence'.")  # type: ignore[union-attr]
    assert threads["results"] == []
