"""Distilling a thread into notes: through the MCP prompt (a scripted agent) and through sampling.

A 40-message thread carries 6 facts, 3 preferences and 2 decisions among small talk. The
scripted agent and the scripted sampling model both find each planted message by its text
and cite the memory id the server showed them, as a real agent or model would.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import MCPServer
from mcp_types import CreateMessageRequestParams, CreateMessageResult, TextContent

from tests.tools.helpers import call, call_error

# (message text, note type, note content)
PLANTED = [
    ("My sister Alice just moved to Lisbon for work.", "fact", "The user's sister Alice lives in Lisbon."),
    (
        "I work as a data engineer at Orbital Labs.",
        "fact",
        "The user works as a data engineer at Orbital Labs.",
    ),
    ("Our dog Pepper turns 5 in March.", "fact", "The user's dog Pepper turns 5 in March."),
    ("The launch of Project Kestrel is on June 12.", "fact", "Project Kestrel launches on June 12."),
    ("I'm allergic to shellfish, by the way.", "fact", "The user is allergic to shellfish."),
    ("We run our services on Kubernetes 1.29.", "fact", "The user's team runs services on Kubernetes 1.29."),
    (
        "I prefer tea over coffee in the mornings.",
        "preference",
        "The user prefers tea over coffee in the morning.",
    ),
    (
        "Please keep answers short, bullet points are best.",
        "preference",
        "The user wants short answers in bullet points.",
    ),
    ("I like dark mode in every editor.", "preference", "The user likes dark mode in editors."),
    (
        "Let's go with PostgreSQL for the Kestrel database.",
        "decision",
        "Project Kestrel will use PostgreSQL as its database.",
    ),
    (
        "We decided to ship Kestrel weekly instead of monthly.",
        "decision",
        "Project Kestrel ships weekly, not monthly.",
    ),
]
CONCEPTS = {"Alice": "Alice, the user's sister", "Kestrel": "Project Kestrel, the user's product"}
FILLER = [
    "Hi, how are you today?",
    "Doing well, thanks for asking!",
    "Can you help me think something through?",
    "Of course, go ahead.",
    "Hmm, let me think about that for a moment.",
    "Sure, take your time.",
]


def thread() -> list[dict[str, Any]]:
    texts = [p[0] for p in PLANTED]
    messages: list[str] = []
    for i in range(40):
        messages.append(texts.pop(0) if i % 3 == 1 and texts else FILLER[i % len(FILLER)] + f" ({i})")
    assert not texts
    return [
        {"role": "user" if i % 2 == 0 else "assistant", "content": text, "id": f"m{i}"}
        for i, text in enumerate(messages)
    ]


def cited_ids(material: str) -> dict[str, str]:
    """Message text -> memory id, as the prompt or the sampling request shows them."""
    return {m.group(2): m.group(1) for m in re.finditer(r"\[memory:([0-9a-f-]+)\] \w+: (.*)", material)}


def distillation(material: str) -> dict[str, Any]:
    """What a good model answers: each planted message as a note citing it, entities, links."""
    ids = cited_ids(material)
    notes = [
        {"key": f"n{i}", "type": kind, "content": content, "sources": [ids[text]]}
        for i, (text, kind, content) in enumerate(PLANTED)
    ]
    notes += [
        {"key": name, "type": "concept", "content": text, "sources": []} for name, text in CONCEPTS.items()
    ]
    links = [
        {"from_key": n["key"], "to_key": name, "relation": "part_of"}
        for n in notes[: len(PLANTED)]
        for name in CONCEPTS
        if name in n["content"]
    ]
    return {"notes": notes, "links": links}


class Model:
    """The client's model behind sampling: answers the distillation request it is shown."""

    def __init__(self) -> None:
        self.requests: list[CreateMessageRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult:
        self.requests.append(params)
        material = params.messages[0].content.text  # type: ignore[union-attr]
        answer = "Here are the notes:\n" + json.dumps(distillation(material))
        return CreateMessageResult(role="assistant", content=TextContent(type="text", text=answer), model="m")


async def _notes(client: Client) -> list[dict[str, Any]]:
    found = await call(client, "recall_memory", query="user Kestrel Alice", kinds=["note"], limit=50)
    return found["results"]  # type: ignore[no-any-return]


def _sources(note: dict[str, Any]) -> list[str]:
    return [t.removeprefix("src:") for t in note["tags"] if t.startswith("src:")]


async def test_the_prompt_hands_an_agent_the_thread_and_its_notes_cite_the_messages(
    server: MCPServer[Any],
) -> None:
    async with Client(server) as client:
        stored = await call(client, "remember_thread", thread_id="kestrel", messages=thread())
        prompt = await client.get_prompt("distill_thread", {"thread_id": "kestrel"})
        material = prompt.messages[0].content.text  # type: ignore[union-attr]
        # The scripted agent follows the prompt: one create_note per note, citing ids with src: tags.
        for note in distillation(material)["notes"]:
            tags = [f"src:{s}" for s in note["sources"]]
            await call(
                client,
                "create_note",
                content=note["content"],
                type=note["type"],
                tags=tags,
                thread_id="kestrel",
            )
        notes = await _notes(client)

    assert "create_note" in material
    assert "supersedes" in material
    ids = dict(zip([m["content"] for m in thread()], stored["memory_ids"], strict=True))
    by_content = {n["text"]: n for n in notes}
    for text, kind, content in PLANTED:
        assert by_content[content]["note_type"] == kind
        assert _sources(by_content[content]) == [ids[text]]
    assert sorted(n["note_type"] for n in notes).count("fact") == 6


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_distill_through_sampling_stores_cited_linked_notes_once(
    server: MCPServer[Any], mode: str
) -> None:
    model = Model()
    async with Client(server, sampling_callback=model, mode=mode) as client:
        stored = await call(client, "remember_thread", thread_id="kestrel", messages=thread())
        first = await call(client, "distill_thread", thread_id="kestrel")
        second = await call(client, "distill_thread", thread_id="kestrel")
        notes = await _notes(client)
        kestrel = next(n["id"] for n in notes if n["text"] == CONCEPTS["Kestrel"])
        around = await call(client, "get_linked_notes", note_id=kestrel)

    assert first["source"] == "sampling"
    assert len(first["created"]) == len(PLANTED) + len(CONCEPTS)
    assert first["links"] == 4
    assert second["created"] == []
    assert sorted(second["existing"]) == sorted(first["created"])
    assert len(notes) == len(PLANTED) + len(CONCEPTS)
    ids = dict(zip([m["content"] for m in thread()], stored["memory_ids"], strict=True))
    by_content = {n["text"]: n for n in notes}
    for text, kind, content in PLANTED:
        assert by_content[content]["note_type"] == kind
        assert _sources(by_content[content]) == [ids[text]]
    assert sorted(n["content"] for n in around["notes"][1:]) == sorted(
        c for _, _, c in PLANTED if "Kestrel" in c
    )


async def test_a_distilled_fact_that_changes_an_older_note_supersedes_it(server: MCPServer[Any]) -> None:
    async with Client(server, sampling_callback=Model()) as client:
        old = await call(
            client, "create_note", content="The user's sister Alice lives in Porto.", type="fact"
        )
        await call(client, "remember_thread", thread_id="kestrel", messages=thread())
        result = await call(client, "distill_thread", thread_id="kestrel")
        live = {n["text"] for n in await _notes(client)}

    assert result["superseded"] == [old["id"]]
    assert "The user's sister Alice lives in Porto." not in live
    assert "The user's sister Alice lives in Lisbon." in live


async def test_distill_without_sampling_or_model_points_to_the_prompt(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="kestrel", messages=thread())
        error = await call_error(client, "distill_thread", thread_id="kestrel")
    assert error == (
        "Error executing tool distill_thread: No model to distill with: the client cannot sample and "
        "HYBRID_MEMORY_SUMMARY_MODEL is unset. Use the distill_thread prompt and store the notes with "
        "create_note yourself."
    )
