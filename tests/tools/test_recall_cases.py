"""What a new user saw (issue 9), through the tools with the real model: the stating turn comes first."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from tests.tools.helpers import call

ALLERGY = [
    {"role": "user", "content": "Can you help me plan dinners for my family visit next month?", "id": "m1"},
    {
        "role": "assistant",
        "content": "Of course. How many people, and any constraints I should know?",
        "id": "m2",
    },
    {"role": "user", "content": "Six of us, and two are vegetarian.", "id": "m3"},
    {
        "role": "user",
        "content": "My sister is allergic to peanuts, so restaurants must be careful.",
        "id": "m4",
    },
    {
        "role": "assistant",
        "content": "Noted: I will only suggest restaurants that handle nut allergies.",
        "id": "m5",
    },
    {"role": "user", "content": "Also, I prefer trains over planes for getting there.", "id": "m6"},
]


async def _ranked(client: Client, query: str) -> list[str]:
    found = await call(client, "recall_memory", query=query, limit=5)
    return [r["message_id"] for r in found["results"]]


async def test_the_turn_that_states_the_allergy_comes_before_its_acknowledgement(
    server: MCPServer[Any],
) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="family", messages=ALLERGY)
        peanut = await _ranked(client, "peanut allergy")
        assert peanut[0] == "m4"
        assert "m6" not in peanut[:2]


async def test_a_contradicted_note_ranks_below_the_note_that_contradicts_it(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        old = await call(
            client, "create_note", content="The payment retries run every 5 minutes.", type="fact"
        )
        new = await call(client, "create_note", content="Payment retries now run hourly.", type="fact")
        await call(client, "create_link", from_id=new["id"], to_id=old["id"], relation="contradicts")
        found = await call(
            client,
            "recall_memory",
            query="how often do payment retries run every 5 minutes",
            include_invalid=True,
        )
        ids = [r["id"] for r in found["results"]]
        assert ids.index(new["id"]) < ids.index(old["id"])
        assert found["results"][ids.index(old["id"])]["valid_to"] is not None
