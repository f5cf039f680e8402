"""Feedback, thread summaries and the graph map, through the SDK's in-process client on the real stores."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.server import build_server
from hybrid_memory.settings import LifecycleSettings
from tests.conftest import make_settings
from tests.tools.helpers import call, call_error

PETS = [
    {"role": "user", "content": "My cat Miso likes tuna for dinner.", "id": "m1"},
    {"role": "user", "content": "My cat Miso likes salmon for dinner.", "id": "m2"},
]


async def _recall(client: Client, query: str, **options: Any) -> dict[str, dict[str, Any]]:
    found = await call(client, "recall_memory", query=query, limit=10, **options)
    return {hit["id"]: hit for hit in found["results"]}


async def test_rating_useful_raises_importance_and_the_score_in_recall(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        stored = await call(client, "remember_thread", thread_id="pets", messages=PETS)
        rated = stored["memory_ids"][1]
        before = (await _recall(client, "what does Miso eat"))[rated]

        result = await call(client, "rate_memory", memory_id=rated, rating="useful")
        after = (await _recall(client, "what does Miso eat"))[rated]

    assert result["importance"] == 0.7
    assert after["importance"] == 0.7
    assert after["score"] > before["score"]


async def test_rating_wrong_hides_a_memory_from_recall_and_zeroes_its_importance(
    server: MCPServer[Any],
) -> None:
    async with Client(server) as client:
        stored = await call(client, "remember_thread", thread_id="pets", messages=PETS)
        wrong = stored["memory_ids"][0]
        result = await call(client, "rate_memory", memory_id=wrong, rating="wrong")
        shown = await _recall(client, "what does Miso eat")
        everything = await _recall(client, "what does Miso eat", include_invalid=True)

    assert result["importance"] == 0.0
    assert result["valid_to"] is not None
    assert wrong not in shown
    assert stored["memory_ids"][1] in shown
    assert everything[wrong]["importance"] == 0.0


async def test_rating_a_note_outdated_closes_its_validity_in_graph_and_recall(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        note = await call(client, "create_note", content="The team meets on Mondays at 10.", type="fact")
        result = await call(client, "rate_memory", memory_id=note["id"], rating="outdated")
        shown = await _recall(client, "when does the team meet")
        everything = await _recall(client, "when does the team meet", include_invalid=True)
        linked = await call(client, "get_linked_notes", note_id=note["id"])

    assert result["kind"] == "note"
    assert note["id"] not in shown
    assert everything[note["id"]]["valid_to"] == result["valid_to"]
    assert linked["notes"][0]["valid_to"] == result["valid_to"]


async def test_rating_an_unknown_id_says_where_ids_come_from(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        error = await call_error(client, "rate_memory", memory_id="nope", rating="useful")
    assert error == (
        "Error executing tool rate_memory: No memory or note 'nope' in this project. "
        "recall_memory returns the ids you can rate."
    )


def _long_thread(n: int) -> list[dict[str, Any]]:
    topics = [
        "the Lisbon trip in May",
        "the budget of 4000 euros",
        "the hotel near Alfama",
        "flights with TAP",
    ]
    return [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": f"Turn {i} is about {topics[i % 4]}.",
            "id": f"m{i}",
        }
        for i in range(n)
    ]


async def test_a_long_thread_gets_one_summary_memory_refreshed_as_it_grows(
    tmp_path: Path, embedder: Embedder
) -> None:
    settings = make_settings(tmp_path / "data", lifecycle=LifecycleSettings(thread_summary_min_messages=8))
    async with Client(build_server(settings, embedder=embedder)) as client:
        await call(client, "remember_thread", thread_id="short", messages=_long_thread(7))
        await call(client, "remember_thread", thread_id="trip", messages=_long_thread(8))
        first = await call(client, "recall_memory", query="Lisbon trip budget", kinds=["summary"], limit=10)
        await call(client, "remember_thread", thread_id="trip", messages=_long_thread(10))
        second = await call(client, "recall_memory", query="Lisbon trip budget", kinds=["summary"], limit=10)
        again = await call(client, "summarize_thread", thread_id="trip")

    assert [hit["thread_id"] for hit in first["results"]] == ["trip"]
    assert "(8 messages" in first["results"][0]["text"]
    assert [hit["id"] for hit in second["results"]] == [first["results"][0]["id"]]
    assert "(10 messages" in second["results"][0]["text"]
    assert "4000 euros" in second["results"][0]["text"]
    assert again["changed"] is False
    assert again["id"] == first["results"][0]["id"]


async def test_summarize_thread_on_an_unknown_thread_names_list_threads(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        error = await call_error(client, "summarize_thread", thread_id="nothing")
    assert error == (
        "Error executing tool summarize_thread: No thread 'nothing' in this project. "
        "list_threads returns thread ids."
    )


async def _note(client: Client, content: str, type: str = "fact") -> str:
    return (await call(client, "create_note", content=content, type=type, force=True))["id"]  # type: ignore[no-any-return]


async def test_map_notes_names_hubs_clusters_and_orphans(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        alice = await _note(client, "Alice, the user's sister", "concept")
        a_facts = [
            await _note(client, f"Alice {what}") for what in ("lives in Lisbon", "is a nurse", "plays cello")
        ]
        garden = await _note(client, "The vegetable garden", "concept")
        g_facts = [
            await _note(client, f"The garden {what}") for what in ("has tomatoes", "needs water daily")
        ]
        lonely = await _note(client, "Quarterly taxes are due in April")
        for fact in a_facts:
            await call(client, "create_link", from_id=fact, to_id=alice, relation="part_of")
        for fact in g_facts:
            await call(client, "create_link", from_id=fact, to_id=garden, relation="part_of")
        result = await call(client, "map_notes", limit=5)
        small = await call(client, "map_notes", limit=5, max_tokens=200)

    assert result["notes"] == 8
    assert result["links"] == 5
    assert [h["id"] for h in result["hubs"][:2]] == [alice, garden]
    assert result["hubs"][0]["degree"] == 3
    assert [(c["hub_id"], c["size"]) for c in result["clusters"]] == [(alice, 4), (garden, 3)]
    assert "alice" in result["clusters"][0]["terms"]
    assert [o["id"] for o in result["orphans"]] == [lonely]
    assert result["truncated"] is False
    assert small["truncated"] is True
    assert len(small["hubs"]) + len(small["clusters"]) + len(small["orphans"]) < 12
