"""create_note with a changed value: an update of the older note (superseded), never its duplicate."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from tests.tools.helpers import call


async def test_a_new_value_supersedes_the_note_it_changes_and_says_what_it_was(
    server: MCPServer[Any],
) -> None:
    async with Client(server) as client:
        old = await call(
            client,
            "create_note",
            content="Auth tokens expire after 15 minutes in the deploy pipeline.",
            type="fact",
        )
        result = await client.call_tool(
            "create_note",
            {"content": "Auth tokens expire after 30 minutes in the deploy pipeline.", "type": "fact"},
        )
        new = result.structured_content
        assert new is not None
        assert new["id"] != old["id"]
        assert new["duplicate"] is False
        assert (new["supersedes"], new["was"]) == (old["id"], "15 minutes")
        text = "".join(getattr(block, "text", "") for block in result.content)
        assert "updated: was 15 minutes" in text

        linked = await call(client, "get_linked_notes", note_id=old["id"])
        [closed] = [n for n in linked["notes"] if n["id"] == old["id"]]
        assert closed["valid_to"] is not None
        assert closed["superseded_by"] == new["id"]
        found = await call(client, "recall_memory", query="when do auth tokens expire", kinds=["note"])
        assert [r["id"] for r in found["results"]] == [new["id"]]

        again = await call(
            client,
            "create_note",
            content="Auth tokens expire after 30 minutes in the deploy pipeline.",
            type="fact",
        )
        assert (again["id"], again["duplicate"]) == (new["id"], True)


async def test_versions_switches_and_negations_are_updates_too(server: MCPServer[Any]) -> None:
    pairs = [
        (
            "We run the billing database on Postgres 16 in production.",
            "We run the billing database on Postgres 17 in production.",
            "Postgres 16",
        ),
        (
            "Dark mode is enabled for every admin dashboard user.",
            "Dark mode is disabled for every admin dashboard user.",
            "enabled",
        ),
        (
            "We squash commits when merging pull requests into main.",
            "We never squash commits when merging pull requests into main.",
            "We squash commits when merging pull requests into main.",
        ),
    ]
    async with Client(server) as client:
        for before, after, was in pairs:
            old = await call(client, "create_note", content=before, type="decision")
            new = await call(client, "create_note", content=after, type="decision")
            assert (new["duplicate"], new["supersedes"], new["was"]) == (False, old["id"], was), after


async def test_thirty_notes_alike_but_for_their_number_each_come_back_as_themselves(
    server: MCPServer[Any],
) -> None:
    async with Client(server) as client:
        made = [
            await call(
                client,
                "create_note",
                content=f"The fixture detail number {n} is kept for the suite.",
                type="fact",
            )
            for n in range(1, 31)
        ]
    assert [m["duplicate"] for m in made] == [False] * 30
    assert len({m["id"] for m in made}) == 30
    assert [m["content"] for m in made] == [
        f"The fixture detail number {n} is kept for the suite." for n in range(1, 31)
    ]


async def test_a_different_subject_is_not_an_update(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        front = await call(
            client, "create_note", content="The frontend uses React for rendering pages.", type="fact"
        )
        back = await call(
            client, "create_note", content="The backend uses React for rendering pages.", type="fact"
        )
        assert back["supersedes"] is None
        linked = await call(client, "get_linked_notes", note_id=front["id"])
        assert linked["notes"][0]["valid_to"] is None
