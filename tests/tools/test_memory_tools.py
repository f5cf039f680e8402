"""The tools through the SDK's in-process client, over the real embedded stores and the real model."""

from __future__ import annotations

from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from tests.tools.helpers import call

THREAD = [
    {"role": "system", "content": "You are a helpful assistant."},
    {"role": "user", "content": "I adopted a beagle puppy named Biscuit last weekend.", "id": "m1"},
    {"role": "assistant", "content": "Congratulations! Beagles are energetic and friendly.", "id": "m2"},
    {"role": "user", "content": "My sister is flying in from Lisbon on Friday.", "id": "m3"},
    {
        "role": "assistant",
        "content": [
            {"type": "thinking", "thinking": "plan the reply"},
            {"type": "tool_use", "id": "t1", "name": "calendar", "input": {}},
            {"type": "text", "text": "I added the airport pickup to your calendar."},
        ],
        "id": "m4",
    },
    {"role": "tool", "content": "calendar: ok"},
]


async def test_remember_thread_keeps_user_and_assistant_text_and_counts_the_rest(
    server: MCPServer[Any],
) -> None:
    async with Client(server) as client:
        result = await call(client, "remember_thread", thread_id="t-1", messages=THREAD)
        assert result["stored"] == 4
        assert result["unchanged"] == 0
        assert result["chunks"] == 4
        assert (result["skipped_messages"], result["skipped_blocks"]) == (2, 2)
        assert result["skipped_reasons"] == {
            "role:system": 1,
            "role:tool": 1,
            "block:thinking": 1,
            "block:tool_use": 1,
        }
        assert len(result["memory_ids"]) == 4


async def test_remember_thread_twice_stores_nothing_twice(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        first = await call(client, "remember_thread", thread_id="t-1", messages=THREAD)
        again = await call(client, "remember_thread", thread_id="t-1", messages=THREAD)
        assert again["stored"] == 0
        assert again["unchanged"] == 4
        assert again["chunks"] == 0
        assert again["memory_ids"] == first["memory_ids"]
        threads = await call(client, "list_threads")
        assert threads == {"threads": [{"thread_id": "t-1", "memories": 4}], "next_offset": None}


async def test_remember_thread_without_ids_is_idempotent_by_content(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        messages = [
            {"role": "user", "content": "ok"},
            {"role": "assistant", "content": "ok"},
            {"role": "user", "content": "ok"},
        ]
        first = await call(client, "remember_thread", thread_id="t-2", messages=messages)
        again = await call(client, "remember_thread", thread_id="t-2", messages=messages)
        assert first["stored"] == 3
        assert again["stored"] == 0
        assert len(set(first["memory_ids"])) == 3


async def test_an_edited_message_is_updated_in_place(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="t-1", messages=THREAD)
        edited = [{"role": "user", "content": "My brother is flying in from Porto on Friday.", "id": "m3"}]
        result = await call(client, "remember_thread", thread_id="t-1", messages=edited)
        assert result["stored"] == 1
        hits = await call(client, "recall_memory", query="who is flying in on Friday", limit=1)
        assert hits["results"][0]["message_id"] == "m3"
        assert hits["results"][0]["text"] == "My brother is flying in from Porto on Friday."


async def test_recall_finds_a_paraphrase_first_with_its_message_id(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="t-1", messages=THREAD)
        result = await call(client, "recall_memory", query="what kind of dog did I get?")
        top = result["results"][0]
        assert top["message_id"] == "m1"
        assert top["thread_id"] == "t-1"
        assert top["kind"] == "message"
        assert top["role"] == "user"
        assert "dense" in top["channels"]
        assert set(top["ranks"]) == set(top["channels"])
        assert result["skipped_channels"] == {}


async def test_recall_filters_by_thread_and_kind(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="t-1", messages=THREAD)
        await call(
            client,
            "remember_thread",
            thread_id="t-9",
            messages=[{"role": "user", "content": "Biscuit chewed my shoes."}],
        )
        note = await call(
            client, "create_note", content="The user's dog is a beagle called Biscuit.", type="fact"
        )
        only_t9 = await call(client, "recall_memory", query="Biscuit", thread_id="t-9", limit=10)
        assert {r["thread_id"] for r in only_t9["results"]} == {"t-9"}
        notes = await call(client, "recall_memory", query="Biscuit the dog", kinds=["note"], limit=10)
        assert [r["id"] for r in notes["results"]] == [note["id"]]
        assert notes["results"][0]["note_type"] == "fact"


async def test_long_messages_are_chunked_and_recalled_once(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        filler = " ".join(
            f"Sentence number {i} talks about the weather in a pleasant way." for i in range(80)
        )
        long_text = filler + " The garage door is painted tangerine."
        result = await call(
            client,
            "remember_thread",
            thread_id="long",
            messages=[{"role": "user", "content": long_text, "id": "big"}],
        )
        assert result["chunks"] > 2
        hits = await call(client, "recall_memory", query="garage door colour", limit=5)
        assert hits["results"][0]["message_id"] == "big"
        assert "tangerine" in hits["results"][0]["text"]
        assert [r["message_id"] for r in hits["results"]].count("big") == 1


async def test_notes_links_and_neighbourhood(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        a = await call(
            client,
            "create_note",
            content="Use PostgreSQL for the billing service.",
            type="decision",
            tags=["db"],
            importance=0.9,
        )
        b = await call(client, "create_note", content="Billing needs multi-row transactions.", type="fact")
        c = await call(client, "create_note", content="Transactions must be serialisable.", type="insight")
        assert a["type"] == "decision"
        assert a["tags"] == ["db"]
        assert a["importance"] == 0.9
        link = await call(
            client, "create_link", from_id=b["id"], to_id=a["id"], relation="supports", strength=0.8
        )
        assert (link["from_id"], link["to_id"], link["relation"], link["strength"]) == (
            b["id"],
            a["id"],
            "supports",
            0.8,
        )
        await call(client, "create_link", from_id=c["id"], to_id=b["id"], relation="extends")

        one = await call(client, "get_linked_notes", note_id=a["id"])
        assert [n["id"] for n in one["notes"]] == [a["id"], b["id"]]
        assert [(lk["from_id"], lk["to_id"]) for lk in one["links"]] == [(b["id"], a["id"])]
        two = await call(client, "get_linked_notes", note_id=a["id"], depth=2)
        assert {n["id"] for n in two["notes"]} == {a["id"], b["id"], c["id"]}
        out_only = await call(client, "get_linked_notes", note_id=a["id"], direction="out")
        assert [n["id"] for n in out_only["notes"]] == [a["id"]]
        only_extends = await call(client, "get_linked_notes", note_id=b["id"], relations=["extends"])
        assert {n["id"] for n in only_extends["notes"]} == {b["id"], c["id"]}


async def test_linking_again_updates_strength_not_duplicates(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        a = await call(client, "create_note", content="Alpha", type="concept")
        b = await call(client, "create_note", content="Beta", type="concept")
        await call(client, "create_link", from_id=a["id"], to_id=b["id"], relation="relates_to", strength=0.2)
        await call(client, "create_link", from_id=a["id"], to_id=b["id"], relation="relates_to", strength=0.7)
        hood = await call(client, "get_linked_notes", note_id=a["id"])
        assert [lk["strength"] for lk in hood["links"]] == [0.7]


async def test_supersedes_hides_the_old_note_unless_asked(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        old = await call(client, "create_note", content="The team standup is at 9am.", type="fact")
        new = await call(client, "create_note", content="The team standup moved to 10am.", type="fact")
        await call(client, "create_link", from_id=new["id"], to_id=old["id"], relation="supersedes")
        current = await call(client, "recall_memory", query="when is the team standup", kinds=["note"])
        assert [r["id"] for r in current["results"]] == [new["id"]]
        everything = await call(
            client, "recall_memory", query="when is the team standup", kinds=["note"], include_invalid=True
        )
        assert {r["id"] for r in everything["results"]} == {new["id"], old["id"]}
        closed = next(r for r in everything["results"] if r["id"] == old["id"])
        assert closed["valid_to"] is not None


async def test_update_note_changes_what_recall_finds(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        note = await call(client, "create_note", content="Favourite colour: green", type="preference")
        updated = await call(
            client, "update_note", note_id=note["id"], content="Favourite colour: purple", tags=["colour"]
        )
        assert updated["content"] == "Favourite colour: purple"
        assert updated["tags"] == ["colour"]
        assert updated["created"] == note["created"]
        hits = await call(client, "recall_memory", query="favourite colour", kinds=["note"])
        assert [r["text"] for r in hits["results"]] == ["Favourite colour: purple"]


async def test_forget_a_note_removes_it_and_its_links(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        a = await call(client, "create_note", content="Cats are mammals.", type="fact")
        b = await call(client, "create_note", content="Mammals are animals.", type="fact")
        await call(client, "create_link", from_id=a["id"], to_id=b["id"], relation="extends")
        result = await call(client, "forget", ids=[b["id"]])
        assert result == {"deleted_memories": 1, "deleted_notes": 1, "ids": [b["id"]], "more_ids": 0}
        hood = await call(client, "get_linked_notes", note_id=a["id"])
        assert hood == {"notes": [hood["notes"][0]], "links": []}
        hits = await call(client, "recall_memory", query="mammals animals", limit=10)
        assert b["id"] not in [r["id"] for r in hits["results"]]


async def test_forget_a_thread_removes_its_messages_only(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="t-1", messages=THREAD)
        await call(
            client, "remember_thread", thread_id="t-2", messages=[{"role": "user", "content": "keep me"}]
        )
        result = await call(client, "forget", thread_id="t-1")
        assert result["deleted_memories"] == 4
        threads = await call(client, "list_threads")
        assert threads == {"threads": [{"thread_id": "t-2", "memories": 1}], "next_offset": None}


async def test_tools_declare_annotations_and_output_schemas(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert set(tools) >= {
            "recall_memory",
            "remember_thread",
            "create_note",
            "create_link",
            "get_linked_notes",
            "update_note",
            "forget",
            "list_threads",
        }
        assert tools["recall_memory"].annotations.read_only_hint is True
        assert tools["forget"].annotations.destructive_hint is True
        assert tools["remember_thread"].annotations.idempotent_hint is True
        for tool in tools.values():
            assert tool.output_schema is not None, tool.name
            assert tool.description, tool.name


async def test_list_threads_pages_largest_first(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        for n, thread in ((3, "big"), (2, "mid"), (1, "small")):
            messages = [{"role": "user", "content": f"{thread} message {i}", "id": str(i)} for i in range(n)]
            await call(client, "remember_thread", thread_id=thread, messages=messages)
        first = await call(client, "list_threads", limit=2)
        assert first == {
            "threads": [{"thread_id": "big", "memories": 3}, {"thread_id": "mid", "memories": 2}],
            "next_offset": 2,
        }
        last = await call(client, "list_threads", limit=2, offset=first["next_offset"])
        assert last == {"threads": [{"thread_id": "small", "memories": 1}], "next_offset": None}


async def test_a_reply_is_found_by_the_words_of_the_question_it_answers(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        messages = [
            {"role": "user", "content": "Have you ever been to Lisbon?", "id": "q"},
            {"role": "assistant", "content": "Yes, last May, for a week.", "id": "a"},
            {"role": "user", "content": "I prefer mountains to beaches.", "id": "other"},
        ]
        await call(client, "remember_thread", thread_id="trip", messages=messages)
        hits = await call(client, "recall_memory", query="Lisbon trip", limit=3)
        by_id = {r["message_id"]: r for r in hits["results"]}
        # the answer takes its question's place, the question right after it
        assert list(by_id)[:2] == ["a", "q"]
        # the reply never says "Lisbon": the context channel (its text with the question) finds it
        assert "context" in by_id["a"]["channels"]
        assert "keyword" not in by_id["a"]["channels"]


async def test_linked_notes_join_recall_but_respect_its_filters(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        fact = await call(
            client, "create_note", content="The billing service runs on PostgreSQL 16.", type="fact"
        )
        decision = await call(
            client, "create_note", content="Adopt logical replication next quarter.", type="decision"
        )
        await call(client, "create_link", from_id=decision["id"], to_id=fact["id"], relation="relates_to")

        anything = await call(client, "recall_memory", query="billing PostgreSQL", kinds=["note"], limit=5)
        assert [r["id"] for r in anything["results"]] == [fact["id"], decision["id"]]

        # Only the graph's neighbour channel reaches the decision now, and the filter keeps it out.
        facts = await call(client, "recall_memory", query="billing PostgreSQL", note_types=["fact"], limit=5)
        assert [r["id"] for r in facts["results"]] == [fact["id"]]
