"""What the agent reads, over MCP with the real model: compact, bounded answers and forgiving input."""

from __future__ import annotations

import importlib.util
import json
import random
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer
from tokenizers import Tokenizer

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.server import build_server
from hybrid_memory.settings import Settings
from hybrid_memory.tools.budget import DEFAULT_TOKENS, MAX_TOKENS
from tests.tools.helpers import call

THREAD = [
    ("user", "We moved the team offsite to the mountain lodge near Bergen."),
    ("assistant", "Noted: the offsite is at the mountain lodge near Bergen."),
    ("user", "Priya will run the planning workshop on the second morning."),
    ("assistant", "I will send Priya the workshop agenda template."),
    ("user", "The lodge has no vegetarian menu, so we bring our own cook."),
    ("assistant", "Then the cook needs the headcount by Thursday."),
]
CLIENT_LIMIT = 25_000
"""Claude Code cuts tool output past this many tokens."""


def claude_tokenizer() -> Tokenizer:
    """Claude's tokenizer.json, as anthropic 0.34 ships it (a test dependency); found without importing it."""
    spec = importlib.util.find_spec("anthropic")
    assert spec is not None, "pip install -e '.[test]' brings anthropic"
    assert spec.submodule_search_locations
    return Tokenizer.from_file(str(Path(spec.submodule_search_locations[0]) / "tokenizer.json"))


def text_of(result: Any) -> str:
    return "".join(getattr(block, "text", "") for block in result.content)


def whole(result: Any, tokenizer: Tokenizer) -> int:
    """Tokens of everything the client receives: the text and the structured content."""
    data = json.dumps(result.structured_content)
    return len(tokenizer.encode(text_of(result)).ids) + len(tokenizer.encode(data).ids)


def long_text(seed: int, chars: int = 90_000) -> str:
    rng = random.Random(seed)
    words = [
        "river",
        "lantern",
        "copper",
        "meadow",
        "signal",
        "harbour",
        "orbit",
        "velvet",
        "granite",
        "echo",
    ]
    text = f"Document {seed}: "
    while len(text) < chars:
        text += " ".join(rng.choice(words) for _ in range(12)) + f" {rng.randint(0, 99_999)}. "
    return text[:chars]


async def test_a_recall_reads_as_one_cited_line_per_hit(server: MCPServer[Any]) -> None:
    messages = [{"role": r, "content": c, "id": f"m{i}"} for i, (r, c) in enumerate(THREAD)]
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="t-1", messages=messages)
        result = await client.call_tool("recall_memory", {"query": "the offsite at the lodge", "limit": 5})
        explained = await client.call_tool(
            "recall_memory", {"query": "the offsite at the lodge", "limit": 5, "explain": True}
        )
    hits = result.structured_content["results"]
    text = text_of(result)
    assert len(hits) == 5
    assert len(text) <= 2 * sum(len(h["text"]) for h in hits) + 60 * len(hits)
    assert text.splitlines()[0].startswith(f"[memory:{hits[0]['id']}] ")
    assert [line.split("]")[0] for line in text.splitlines()] == [f"[memory:{h['id']}" for h in hits]
    assert "score" not in text
    assert "dense#" in text_of(explained)
    assert set(hits[0]) >= {"channels", "ranks", "relevance", "recency"}


async def test_a_90000_character_note_is_cut_within_the_budget_and_read_whole_page_by_page(
    server: MCPServer[Any], embedder: Embedder
) -> None:
    content = long_text(1)
    async with Client(server) as client:
        created = await client.call_tool("create_note", {"content": content, "type": "fact"})
        note_id = created.structured_content["id"]
        recalled = await client.call_tool("recall_memory", {"query": "Document 1 river lantern"})
        pages, offset = [], 0
        while offset is not None:
            page = await call(client, "read_memory", memory_id=note_id, offset=offset)
            pages.append(page["text"])
            offset = page["next_offset"]

    assert embedder.count_tokens(text_of(created)) <= DEFAULT_TOKENS
    assert embedder.count_tokens(text_of(recalled)) <= DEFAULT_TOKENS
    [hit] = [h for h in recalled.structured_content["results"] if h["id"] == note_id]
    assert hit["text"].endswith(")]")
    assert f'read_memory(memory_id="{note_id}", offset=' in hit["text"]
    assert "".join(pages) == content
    assert len(pages) > 5


async def test_fifty_long_notes_recalled_and_walked_stay_within_the_budget(
    server: MCPServer[Any], embedder: Embedder
) -> None:
    claude = claude_tokenizer()
    async with Client(server) as client:
        hub = await call(client, "create_note", content="The river archive", type="concept")
        for seed in range(50):
            note = await call(client, "create_note", content=long_text(seed), type="fact", force=True)
            await call(client, "create_link", from_id=note["id"], to_id=hub["id"], relation="part_of")
        answers = {
            "recall": await client.call_tool("recall_memory", {"query": "river lantern copper", "limit": 50}),
            "linked": await client.call_tool("get_linked_notes", {"note_id": hub["id"], "limit": 200}),
        }
        largest = {
            "recall": await client.call_tool(
                "recall_memory", {"query": "river lantern", "limit": 50, "max_tokens": MAX_TOKENS}
            ),
            "linked": await client.call_tool(
                "get_linked_notes", {"note_id": hub["id"], "limit": 200, "max_tokens": MAX_TOKENS}
            ),
        }
    for name, answer in answers.items():
        assert embedder.count_tokens(text_of(answer)) <= DEFAULT_TOKENS, name
        assert whole(answer, claude) < CLIENT_LIMIT, name
    for name, answer in largest.items():
        assert embedder.count_tokens(text_of(answer)) <= MAX_TOKENS, name
        assert whole(answer, claude) < CLIENT_LIMIT, name
    assert "left out to stay within max_tokens" in text_of(answers["recall"])


async def test_forty_short_turns_past_the_budget_come_back_whole_as_many_as_fit(
    server: MCPServer[Any], embedder: Embedder
) -> None:
    turns = [
        {
            "role": "assistant",
            "id": f"t{n}",
            "content": f"In region {n} the invoices run in batches of {n + 2} hundred.",
        }
        for n in range(40)
    ]
    async with Client(server) as client:
        await call(client, "remember_thread", thread_id="regions", messages=turns)
        answer = await client.call_tool(
            "recall_memory",
            {"query": "what was said", "thread_id": "regions", "limit": 50, "with_context": False},
        )
        everything = await call(
            client,
            "recall_memory",
            query="what was said",
            thread_id="regions",
            limit=50,
            with_context=False,
            max_tokens=MAX_TOKENS,
        )
    kept = answer.structured_content["results"]
    assert len(everything["results"]) == 40
    # A short turn cut would carry a marker longer than its text: the turns that fit come back whole,
    # the rest are left out (each line costs some 60 tokens of the 2,000).
    assert len(kept) >= 30
    assert [h["text"] for h in kept] == [h["text"] for h in everything["results"][: len(kept)]]
    assert embedder.count_tokens(text_of(answer)) <= DEFAULT_TOKENS


async def test_an_openai_format_thread_is_accepted_with_exact_skip_counts(server: MCPServer[Any]) -> None:
    messages = [
        {"role": "system", "content": "You are a booking assistant."},
        {"role": "user", "content": "Book a table for two at Luigi's tonight."},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "book", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": "booked 19:00"},
        {
            "role": "assistant",
            "content": "Booked Luigi's for 7pm; I also added it to your calendar.",
            "tool_calls": [
                {"id": "call_2", "type": "function", "function": {"name": "calendar", "arguments": "{}"}},
                {"id": "call_3", "type": "function", "function": {"name": "notify", "arguments": "{}"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Thanks! Here is the menu."},
                {"type": "image_url", "image_url": {"url": "https://example.com/menu.png"}},
            ],
        },
    ]
    async with Client(server) as client:
        result = await call(client, "remember_thread", thread_id="openai", messages=messages)
    assert (result["stored"], result["skipped_messages"], result["skipped_blocks"]) == (3, 3, 3)
    assert result["skipped_reasons"] == {
        "role:system": 1,
        "only tool calls": 1,
        "role:tool": 1,
        "block:tool_call": 2,
        "block:image_url": 1,
    }


async def test_an_anthropic_format_thread_is_accepted_with_exact_skip_counts(server: MCPServer[Any]) -> None:
    image = {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="}
    messages = [
        {"role": "user", "content": "What's the weather in Oslo?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "I should call the weather tool.", "signature": "x"},
                {"type": "text", "text": "Let me check the forecast."},
                {"type": "tool_use", "id": "tu_1", "name": "weather", "input": {"city": "Oslo"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tu_1", "content": "4 C, rain"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "It is 4 degrees and raining in Oslo."}]},
        {
            "role": "user",
            "content": [{"type": "text", "text": "And this photo?"}, {"type": "image", "source": image}],
        },
        {"role": "assistant", "content": [{"type": "tool_use", "id": "tu_2", "name": "vision", "input": {}}]},
    ]
    async with Client(server) as client:
        result = await call(client, "remember_thread", thread_id="anthropic", messages=messages)
    assert (result["stored"], result["skipped_messages"], result["skipped_blocks"]) == (4, 2, 3)
    assert result["skipped_reasons"] == {
        "block:thinking": 1,
        "block:tool_use": 1,
        "no text": 1,
        "block:image": 1,
        "only tool calls": 1,
    }


async def test_the_tool_list_costs_at_most_2500_claude_tokens(settings: Settings, embedder: Embedder) -> None:
    claude = claude_tokenizer()
    counts = {}
    for tool_set in ("all", "core"):
        server = build_server(settings.model_copy(update={"tools": tool_set}), embedder=embedder)
        async with Client(server) as client:
            tools = (await client.list_tools()).tools
        listed = "".join(f"{t.name}\n{t.description}\n{json.dumps(t.input_schema)}" for t in tools)
        counts[tool_set] = len(claude.encode(listed).ids)
    assert counts["all"] <= 2_500
    assert counts["core"] < counts["all"] * 2 // 3
