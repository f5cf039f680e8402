"""The server as users run it: a child process over stdio, and over streamable HTTP.

Both run the same story with the real model: remember a thread, recall a paraphrase,
create two notes, link them, read the neighbourhood, restart, and find it all again.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.servers import free_port, http_server, server_env
from tests.tools.helpers import call

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

THREAD = [
    {"role": "user", "content": "We are moving the whole team to Kraków next spring.", "id": "u1"},
    {"role": "assistant", "content": "That is a big move. Do you need help finding an office?", "id": "a1"},
    {"role": "user", "content": "Yes, ideally near the old town, with room for twelve people.", "id": "u2"},
    {"role": "user", "content": "Also, my favourite lunch spot is a vegan ramen bar.", "id": "u3"},
]


async def first_session(client: Client) -> dict[str, Any]:
    stored = await call(client, "remember_thread", thread_id="relocation", messages=THREAD)
    assert stored["stored"] == 4
    recall = await call(client, "recall_memory", query="which city is the team relocating to?")
    assert recall["results"][0]["message_id"] == "u1"
    a = await call(client, "create_note", content="The team relocates to Kraków in spring.", type="decision")
    b = await call(client, "create_note", content="The new office must seat twelve people.", type="fact")
    await call(client, "create_link", from_id=b["id"], to_id=a["id"], relation="part_of")
    hood = await call(client, "get_linked_notes", note_id=a["id"])
    assert [n["id"] for n in hood["notes"]] == [a["id"], b["id"]]
    return {"a": a["id"], "b": b["id"]}


async def second_session(client: Client, ids: dict[str, Any]) -> None:
    again = await call(client, "remember_thread", thread_id="relocation", messages=THREAD)
    assert again["stored"] == 0
    recall = await call(client, "recall_memory", query="where does the user like to eat lunch?")
    assert recall["results"][0]["message_id"] == "u3"
    notes = await call(client, "recall_memory", query="office size requirements", kinds=["note"])
    assert notes["results"][0]["id"] == ids["b"]
    hood = await call(client, "get_linked_notes", note_id=ids["b"])
    assert [(lk["from_id"], lk["to_id"], lk["relation"]) for lk in hood["links"]] == [
        (ids["b"], ids["a"], "part_of")
    ]


def stdio_params(data_dir: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "hybrid_memory", "serve"], env=server_env(data_dir)
    )


async def test_stdio_story_survives_a_restart(tmp_path: Path) -> None:
    with anyio.fail_after(120):
        async with Client(stdio_params(tmp_path)) as client:
            ids = await first_session(client)
        async with Client(stdio_params(tmp_path)) as client:
            await second_session(client, ids)


async def test_a_stdio_server_on_the_store_of_an_http_server_joins_it(tmp_path: Path) -> None:
    # The HTTP server hosts its store on the data dir's socket, as the first stdio server does.
    with anyio.fail_after(120), http_server(tmp_path) as server:
        async with Client(server.url) as client:
            await call(client, "remember_thread", thread_id="t", messages=THREAD[:1])
            async with Client(stdio_params(tmp_path)) as joined:
                seen = await call(joined, "recall_memory", query="moving the team")
                note = await call(joined, "create_note", content="The team moves in spring.", type="fact")
            recall = await call(client, "recall_memory", query="when does the team move?")

    assert seen["results"][0]["message_id"] == "u1"
    assert note["id"] in {hit["id"] for hit in recall["results"]}


async def test_http_story_survives_a_restart_and_serves_two_clients(tmp_path: Path) -> None:
    port = free_port()
    with anyio.fail_after(180):
        with http_server(tmp_path, port) as server:
            async with Client(server.url) as client:
                ids = await first_session(client)
            async with Client(server.url) as other:  # a second client sees the same memory
                hits = await call(other, "recall_memory", query="relocation city", limit=3)
                assert hits["results"]
        with http_server(tmp_path, port) as server:
            async with Client(server.url) as client:
                await second_session(client, ids)
