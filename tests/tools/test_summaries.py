"""Who writes the summary that replaces evicted memories: the client's model, a configured model, or nobody.

The client's model answers through MCP sampling (an in-process ``mcp.Client`` with a
``sampling_callback``), a configured OpenAI-compatible model through a real HTTP
server on 127.0.0.1 that speaks POST /v1/chat/completions, and without either the
extractive summary is written.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.session import ClientRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import CreateMessageRequestParams, CreateMessageResult, ErrorData, TextContent

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.server import build_server
from hybrid_memory.settings import LifecycleSettings
from tests import local_http
from tests.conftest import make_settings
from tests.local_http import JsonHandler, LocalApiServer, serving
from tests.tools.helpers import call

SAMPLED = "The user counted messages zero and one; nothing else of note."
MODEL_SUMMARY = "Earlier the user went through messages zero and one."
# Three items fit; a fourth evicts the two oldest (fifo) and makes room for their summary.
LIMITS: dict[str, Any] = {"max_items": 3, "eviction_policy": "fifo"}


def msg(i: int) -> dict[str, Any]:
    return {"role": "user", "content": f"Message number {i} is about topic {i}.", "id": f"m{i}"}


class Sampler:
    """A client's model: answers every sampling request with ``reply`` and records the requests."""

    def __init__(self, reply: str | None = SAMPLED) -> None:
        self.reply = reply
        self.requests: list[CreateMessageRequestParams] = []

    async def __call__(
        self, context: ClientRequestContext, params: CreateMessageRequestParams
    ) -> CreateMessageResult | ErrorData:
        self.requests.append(params)
        if self.reply is None:
            return ErrorData(code=-1, message="The user declined the sampling request")
        return CreateMessageResult(
            role="assistant", content=TextContent(type="text", text=self.reply), model="client-model"
        )


def limited(tmp_path: Path, embedder: Embedder, **lifecycle: Any) -> MCPServer[Any]:
    settings = make_settings(tmp_path / "data")
    settings = settings.model_copy(update={"lifecycle": LifecycleSettings(**{**LIMITS, **lifecycle})})
    return build_server(settings, embedder=embedder)


async def summaries(client: Client) -> list[str]:
    found = await call(client, "recall_memory", query="earlier messages", kinds=["summary"], limit=10)
    return [hit["text"] for hit in found["results"]]


async def fill_and_overflow(client: Client) -> dict[str, Any]:
    """Three messages that fit, then a fourth that evicts the first two; the fourth's result."""
    await call(client, "remember_thread", thread_id="t", messages=[msg(0), msg(1), msg(2)])
    return await call(client, "remember_thread", thread_id="t", messages=[msg(3)])  # type: ignore[no-any-return]


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_eviction_summary_is_written_by_the_clients_model_through_sampling(
    tmp_path: Path, embedder: Embedder, mode: str
) -> None:
    sampler = Sampler()
    async with Client(limited(tmp_path, embedder), sampling_callback=sampler, mode=mode) as client:
        result = await fill_and_overflow(client)
        assert result["evicted"] == 2
        assert await summaries(client) == [SAMPLED]
        assert (await call(client, "memory_stats"))["items"] == 3
    # Asked once, for the write that evicted, with exactly the memories that went.
    [request] = sampler.requests
    assert request.messages[0].content == TextContent(
        type="text",
        text="Memories to summarise:\n- user: Message number 0 is about topic 0.\n"
        "- user: Message number 1 is about topic 1.",
    )
    assert request.max_tokens == 160
    assert request.system_prompt is not None
    assert request.system_prompt.endswith("Write only the summary, in at most 160 tokens.")


async def test_every_writing_tool_asks_the_client_for_the_summary(tmp_path: Path, embedder: Embedder) -> None:
    sampler = Sampler()
    server = limited(tmp_path, embedder, max_items=2)
    async with Client(server, sampling_callback=sampler) as client:
        await call(client, "remember_thread", thread_id="t", messages=[msg(0), msg(1)])
        note = await call(client, "create_note", content="The user's sister is called Alice.", type="fact")
        assert await summaries(client) == [SAMPLED]
        task = await call(client, "record_task", description="Deploy", outcome="worked", success=True)
        assert task["evicted"] == 2  # the note and the first summary, merged into the next one
        assert await summaries(client) == [SAMPLED]
    assert [r.messages[0].content.text for r in sampler.requests] == [  # type: ignore[union-attr]
        "Memories to summarise:\n- user: Message number 0 is about topic 0.\n"
        "- user: Message number 1 is about topic 1.",
        f"Memories to summarise:\n- {note['content']}\n- {SAMPLED}",
    ]


async def test_cleanup_memory_asks_the_client_for_the_summary(tmp_path: Path, embedder: Embedder) -> None:
    sampler = Sampler()
    data = tmp_path / "data"
    # Stored without limits; a restart with a limit leaves the project over it until cleanup.
    async with Client(build_server(make_settings(data), embedder=embedder)) as client:
        await call(client, "remember_thread", thread_id="t", messages=[msg(i) for i in range(4)])
    server = build_server(
        make_settings(data).model_copy(update={"lifecycle": LifecycleSettings(**LIMITS)}), embedder=embedder
    )
    async with Client(server, sampling_callback=sampler) as client:
        done = await call(client, "cleanup_memory")
        assert done["evicted"] == 2
        assert await summaries(client) == [SAMPLED]
    assert len(sampler.requests) == 1


async def test_without_sampling_the_summary_is_extractive(tmp_path: Path, embedder: Embedder) -> None:
    async with Client(limited(tmp_path, embedder)) as client:
        await fill_and_overflow(client)
        [text] = await summaries(client)
    assert text.startswith("Summary of 2 earlier memories (")
    assert text.endswith(
        "- user: Message number 0 is about topic 0. - user: Message number 1 is about topic 1."
    )


async def test_writes_that_evict_nothing_never_ask_the_client(tmp_path: Path, embedder: Embedder) -> None:
    sampler = Sampler()
    async with Client(limited(tmp_path, embedder, max_items=10), sampling_callback=sampler) as client:
        await fill_and_overflow(client)
        await call(client, "create_note", content="The user likes tea.", type="preference")
        await call(client, "cleanup_memory")
    async with Client(
        limited(tmp_path / "off", embedder, summarize_on_evict=False), sampling_callback=sampler
    ) as client:
        assert (await fill_and_overflow(client))["evicted"] == 1
    assert sampler.requests == []


async def test_a_sampled_summary_is_redacted_like_any_input(tmp_path: Path, embedder: Embedder) -> None:
    sampler = Sampler(reply="The user shared the key sk-proj-abcdefghijklmnop1234 earlier.")
    async with Client(limited(tmp_path, embedder), sampling_callback=sampler) as client:
        await fill_and_overflow(client)
        assert await summaries(client) == ["The user shared the key [REDACTED:api_key] earlier."]


async def test_an_empty_sampled_answer_falls_back_to_extractive(tmp_path: Path, embedder: Embedder) -> None:
    async with Client(limited(tmp_path, embedder), sampling_callback=Sampler(reply="  ")) as client:
        await fill_and_overflow(client)
        [text] = await summaries(client)
    assert text.startswith("Summary of 2 earlier memories (")


async def test_a_declined_sampling_request_falls_back_to_extractive_before_2026_07_28(
    tmp_path: Path, embedder: Embedder
) -> None:
    sampler = Sampler(reply=None)
    async with Client(limited(tmp_path, embedder), sampling_callback=sampler, mode="legacy") as client:
        result = await fill_and_overflow(client)
        assert result["evicted"] == 2
        [text] = await summaries(client)
    assert text.startswith("Summary of 2 earlier memories (")
    assert len(sampler.requests) == 1


async def test_a_declined_sampling_request_fails_the_call_from_2026_07_28(
    tmp_path: Path, embedder: Embedder
) -> None:
    """The client's own driver turns a refused input request into an error; the write does not happen."""
    async with Client(limited(tmp_path, embedder), sampling_callback=Sampler(reply=None)) as client:
        assert client.protocol_version == "2026-07-28"
        await call(client, "remember_thread", thread_id="t", messages=[msg(0), msg(1), msg(2)])
        with pytest.raises(MCPError, match="declined"):
            await client.call_tool("remember_thread", {"thread_id": "t", "messages": [msg(3)]})
        assert (await call(client, "memory_stats"))["items"] == 3


# --- a configured OpenAI-compatible model -----------------------------------------------------


class ChatServer(LocalApiServer):
    """POST /v1/chat/completions: ``summarizer`` answers MODEL_SUMMARY, ``broken`` HTTP 500."""

    def __init__(self) -> None:
        super().__init__(ChatHandler)


class ChatHandler(JsonHandler):
    server: ChatServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(
            {"path": self.path, "authorization": self.headers["Authorization"], **body}
        )
        if self.path != "/v1/chat/completions" or body["model"] not in ("summarizer", "broken"):
            self._reply(404, {"error": {"message": "not found", "type": "not_found_error"}})
        elif body["model"] == "broken":
            self._reply(500, {"error": {"message": "out of memory", "type": "server_error"}})
        else:
            self._reply(
                200,
                {
                    "id": "chatcmpl-1",
                    "object": "chat.completion",
                    "created": 0,
                    "model": body["model"],
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": MODEL_SUMMARY},
                            "finish_reason": "stop",
                        }
                    ],
                },
            )


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    with serving(ChatServer()) as running:
        yield running


@pytest.fixture
def silent_url() -> Iterator[str]:
    with local_http.silent_url() as url:
        yield url


def with_model(
    tmp_path: Path, embedder: Embedder, base_url: str, model: str = "summarizer", timeout_s: float = 5.0
) -> MCPServer[Any]:
    return limited(
        tmp_path,
        embedder,
        summary_model=model,
        summary_base_url=base_url,
        HYBRID_MEMORY_SUMMARY_API_KEY="summary-key",
        summary_timeout_s=timeout_s,
    )


async def test_eviction_summary_is_written_by_the_configured_model(
    tmp_path: Path, embedder: Embedder, chat: ChatServer
) -> None:
    async with Client(with_model(tmp_path, embedder, chat.base_url)) as client:
        await fill_and_overflow(client)
        assert await summaries(client) == [MODEL_SUMMARY]
    [request] = chat.requests
    assert (request["path"], request["authorization"], request["model"]) == (
        "/v1/chat/completions",
        "Bearer summary-key",
        "summarizer",
    )
    assert request["max_tokens"] == 160
    assert [m["role"] for m in request["messages"]] == ["system", "user"]
    assert request["messages"][1]["content"] == (
        "Memories to summarise:\n- user: Message number 0 is about topic 0.\n"
        "- user: Message number 1 is about topic 1."
    )


async def test_private_memories_are_never_sent_to_a_model(
    tmp_path: Path, embedder: Embedder, chat: ChatServer
) -> None:
    sampler = Sampler()
    server = with_model(tmp_path, embedder, chat.base_url)
    async with Client(server, sampling_callback=sampler) as client:
        await call(client, "remember_thread", thread_id="t", messages=[msg(0), msg(1), msg(2)], private=True)
        await call(client, "remember_thread", thread_id="t", messages=[msg(3)])
        [summary] = await summaries(client)
    assert summary not in (SAMPLED, MODEL_SUMMARY)
    assert chat.requests == []
    assert sampler.requests == []


@pytest.mark.parametrize("kind", ["note", "task"])
async def test_private_notes_and_tasks_are_never_sent_to_a_model(
    tmp_path: Path, embedder: Embedder, chat: ChatServer, kind: str
) -> None:
    sampler = Sampler()
    server = with_model(tmp_path, embedder, chat.base_url)
    topics = ("the garden", "a dentist visit", "the tax return")
    async with Client(server, sampling_callback=sampler) as client:
        for topic in topics:
            if kind == "note":
                await call(client, "create_note", content=f"A note about {topic}.", type="fact", private=True)
            else:
                await call(
                    client,
                    "record_task",
                    description=f"Handle {topic}",
                    outcome="done",
                    success=True,
                    private=True,
                )
        await call(client, "remember_thread", thread_id="t", messages=[msg(3)])
        [summary] = await summaries(client)
    assert summary not in (SAMPLED, MODEL_SUMMARY)
    assert chat.requests == []
    assert sampler.requests == []


async def test_the_clients_model_comes_before_the_configured_one(
    tmp_path: Path, embedder: Embedder, chat: ChatServer
) -> None:
    server = with_model(tmp_path, embedder, chat.base_url)
    async with Client(server, sampling_callback=Sampler()) as client:
        await fill_and_overflow(client)
        assert await summaries(client) == [SAMPLED]
    assert chat.requests == []


@pytest.mark.parametrize("failure", ["http 500", "no answer"])
async def test_a_failing_model_falls_back_to_extractive_with_a_warning(
    tmp_path: Path,
    embedder: Embedder,
    chat: ChatServer,
    silent_url: str,
    failure: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    if failure == "http 500":
        server = with_model(tmp_path, embedder, chat.base_url, model="broken")
    else:
        server = with_model(tmp_path, embedder, silent_url, timeout_s=0.2)
    with caplog.at_level(logging.WARNING, logger="hybrid_memory"):
        async with Client(server) as client:
            assert (await fill_and_overflow(client))["evicted"] == 2
            [text] = await summaries(client)
    assert text.startswith("Summary of 2 earlier memories (")
    assert "model summary failed; using the extractive one" in caplog.messages
