"""OpenAIEmbedder against a real HTTP server on 127.0.0.1 that speaks POST /v1/embeddings.

The server answers by model name: ``test-embed`` with deterministic 8-dimensional
vectors (not unit length, in reversed order), ``broken`` with HTTP 500, ``flaky``
with one 500 before it recovers, ``private`` with 401 unless the key is right,
anything else with 404.
"""

from __future__ import annotations

import hashlib
import json
import math
import socket
from collections.abc import AsyncIterator, Iterator
from typing import Any, ClassVar

import anyio
import pytest

from hybrid_memory.embeddings import OpenAIEmbedder, build_embedder, chunk_text
from hybrid_memory.errors import BackendError, BackendUnavailableError
from hybrid_memory.settings import EmbeddingSettings
from tests.local_http import JsonHandler, LocalApiServer, serving, silent_url

DIMENSION = 8
MODEL = "test-embed"


def fake_vector(text: str) -> list[float]:
    """A deterministic, deliberately not unit-length vector for ``text``."""
    digest = hashlib.sha256(text.encode()).digest()
    return [(byte - 127.5) / 10 for byte in digest[:DIMENSION]]


def unit(vector: list[float]) -> list[float]:
    norm = math.hypot(*vector)
    return [value / norm for value in vector]


class EmbeddingsServer(LocalApiServer):
    def __init__(self) -> None:
        super().__init__(EmbeddingsHandler)
        self.failed_once: set[str] = set()


class EmbeddingsHandler(JsonHandler):
    server: EmbeddingsServer
    # Lets the client's retries (on 500) run without its default half-second backoff.
    extra_headers: ClassVar[dict[str, str]] = {"retry-after-ms": "1"}

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(
            {"path": self.path, "authorization": self.headers["Authorization"], **body}
        )
        model = body["model"]
        inputs = [body["input"]] if isinstance(body["input"], str) else body["input"]
        if self.path != "/v1/embeddings" or model not in (MODEL, "broken", "flaky", "private"):
            self._reply(404, {"error": {"message": f"model {model!r} not found", "type": "not_found_error"}})
        elif model == "broken" or (model == "flaky" and "flaky" not in self.server.failed_once):
            self.server.failed_once.add(model)
            self._reply(500, {"error": {"message": "out of memory", "type": "server_error"}})
        elif model == "private" and self.headers["Authorization"] != "Bearer right-key":
            self._reply(
                401, {"error": {"message": "Incorrect API key provided", "type": "invalid_request_error"}}
            )
        else:
            data = [
                {"object": "embedding", "index": index, "embedding": fake_vector(text)}
                for index, text in enumerate(inputs)
            ]
            # Reversed: the client must order by index, not trust the list order.
            usage = {"prompt_tokens": len(inputs), "total_tokens": len(inputs)}
            self._reply(200, {"object": "list", "data": data[::-1], "model": model, "usage": usage})


@pytest.fixture
def server() -> Iterator[EmbeddingsServer]:
    with serving(EmbeddingsServer()) as running:
        yield running


@pytest.fixture
def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@pytest.fixture
def silent_server_url() -> Iterator[str]:
    with silent_url() as url:
        yield url


def make_embedder(base_url: str, **options: Any) -> OpenAIEmbedder:
    settings: dict[str, Any] = {
        "base_url": base_url,
        "api_key": None,
        "dimension": None,
        "timeout_s": 5.0,
        "batch_size": 64,
        **options,
    }
    model = settings.pop("model", MODEL)
    return OpenAIEmbedder(model, **settings)


@pytest.fixture
async def embedder(server: EmbeddingsServer) -> AsyncIterator[OpenAIEmbedder]:
    embedder = make_embedder(server.base_url, batch_size=2)
    yield embedder
    await embedder.close()


async def test_documents_are_embedded_in_batches_in_order_as_unit_vectors(
    embedder: OpenAIEmbedder, server: EmbeddingsServer
) -> None:
    texts = ["alpha", "beta", "gamma", "delta", "epsilon"]

    vectors = await embedder.embed_documents(texts)

    assert [request["input"] for request in server.requests] == [
        ["alpha", "beta"],
        ["gamma", "delta"],
        ["epsilon"],
    ]
    assert {request["encoding_format"] for request in server.requests} == {"float"}
    assert vectors == [pytest.approx(unit(fake_vector(text))) for text in texts]
    assert all(math.hypot(*vector) == pytest.approx(1.0) for vector in vectors)


async def test_query_is_one_request_and_one_unit_vector(
    embedder: OpenAIEmbedder, server: EmbeddingsServer
) -> None:
    vector = await embedder.embed_query("where did we park the car?")

    assert vector == pytest.approx(unit(fake_vector("where did we park the car?")))
    assert [request["input"] for request in server.requests] == [["where did we park the car?"]]


async def test_no_texts_make_no_request(embedder: OpenAIEmbedder, server: EmbeddingsServer) -> None:
    assert await embedder.embed_documents([]) == []
    assert server.requests == []


async def test_a_single_string_is_not_taken_for_a_list_of_characters(embedder: OpenAIEmbedder) -> None:
    with pytest.raises(
        TypeError, match=r"^embed_documents takes a sequence of texts; use embed_query for one string$"
    ):
        await embedder.embed_documents("abc")


async def test_dimension_is_learnt_from_one_probe_even_when_asked_concurrently(
    embedder: OpenAIEmbedder, server: EmbeddingsServer
) -> None:
    with pytest.raises(BackendError) as unknown:
        _ = embedder.dimension
    assert str(unknown.value) == (
        "The dimension of the embedding model 'test-embed' is not known until the server at "
        f"{server.base_url} has answered once (warm_up). Set HYBRID_MEMORY_EMBEDDING_DIMENSION to the "
        "model's vector length to open the store without asking it."
    )

    with anyio.fail_after(10):
        async with anyio.create_task_group() as group:
            for _ in range(3):
                group.start_soon(embedder.warm_up)
    await embedder.warm_up()

    assert embedder.dimension == DIMENSION
    assert len(server.requests) == 1


async def test_dimension_is_also_learnt_from_the_first_embedding(
    embedder: OpenAIEmbedder, server: EmbeddingsServer
) -> None:
    await embedder.embed_query("hello")
    await embedder.warm_up()

    assert embedder.dimension == DIMENSION
    assert len(server.requests) == 1


async def test_configured_dimension_needs_no_request(server: EmbeddingsServer) -> None:
    embedder = make_embedder(server.base_url, dimension=DIMENSION)

    await embedder.warm_up()

    assert embedder.dimension == DIMENSION
    assert server.requests == []


def test_openai_models_have_known_dimensions() -> None:
    embedder = OpenAIEmbedder(
        "text-embedding-3-small", base_url=None, api_key="sk-test", dimension=None, timeout_s=5, batch_size=8
    )

    assert embedder.dimension == 1536
    assert embedder.model_name == "text-embedding-3-small"


async def test_vectors_of_another_length_than_configured_are_refused(server: EmbeddingsServer) -> None:
    embedder = make_embedder(server.base_url, dimension=16)

    with pytest.raises(BackendError) as error:
        await embedder.embed_query("hello")

    assert str(error.value) == (
        f"The embedding model 'test-embed' at {server.base_url} returned 8-dimensional vectors, not 16. "
        "Set HYBRID_MEMORY_EMBEDDING_DIMENSION=8 (a store filled with other vectors must then be "
        "re-embedded through export and import)."
    )
    await embedder.close()


async def test_server_error_is_a_backend_error_after_the_retries(server: EmbeddingsServer) -> None:
    embedder = make_embedder(server.base_url, model="broken")

    with pytest.raises(BackendError) as error:
        await embedder.embed_documents(["hello"])

    assert type(error.value) is BackendError
    assert str(error.value) == (
        f"The embedding server at {server.base_url} failed to embed with model 'broken': "
        "HTTP 500: out of memory"
    )
    assert error.value.__cause__ is not None
    assert len(server.requests) == 3  # the first try and two retries
    await embedder.close()


async def test_one_server_error_is_retried(server: EmbeddingsServer) -> None:
    embedder = make_embedder(server.base_url, model="flaky")

    vector = await embedder.embed_query("hello")

    assert vector == pytest.approx(unit(fake_vector("hello")))
    assert len(server.requests) == 2
    await embedder.close()


async def test_unknown_model_names_the_fix(server: EmbeddingsServer) -> None:
    embedder = make_embedder(server.base_url, model="nomic-embed-text")

    with pytest.raises(BackendError) as error:
        await embedder.embed_query("hello")

    assert str(error.value) == (
        f"The embedding server at {server.base_url} has no model 'nomic-embed-text' (HTTP 404). "
        "Set HYBRID_MEMORY_EMBEDDING_MODEL to a model it serves (with Ollama, pull it first), and check "
        "that HYBRID_MEMORY_EMBEDDING_BASE_URL ends in /v1."
    )
    await embedder.close()


async def test_wrong_key_names_the_fix_and_the_right_one_is_sent(server: EmbeddingsServer) -> None:
    wrong = make_embedder(server.base_url, model="private", api_key="wrong-key")
    right = make_embedder(server.base_url, model="private", api_key="right-key")

    with pytest.raises(BackendError) as error:
        await wrong.embed_query("hello")
    await right.embed_query("hello")

    assert str(error.value) == (
        f"The embedding server at {server.base_url} refused the API key for model 'private' (HTTP 401). "
        "Set OPENAI_API_KEY or HYBRID_MEMORY_EMBEDDING_API_KEY to a valid key."
    )
    assert [request["authorization"] for request in server.requests] == [
        "Bearer wrong-key",
        "Bearer right-key",
    ]
    await wrong.close()
    await right.close()


async def test_closed_port_is_unavailable(closed_port_url: str) -> None:
    embedder = make_embedder(closed_port_url, timeout_s=2.0, max_retries=0)

    with anyio.fail_after(10), pytest.raises(BackendUnavailableError) as error:
        await embedder.embed_query("hello")

    assert str(error.value) == (
        f"Cannot connect to the embedding server at {closed_port_url} (model 'test-embed'). "
        "Start it, or set HYBRID_MEMORY_EMBEDDING_BASE_URL to a running OpenAI-compatible server."
    )
    assert error.value.__cause__ is not None
    await embedder.close()


async def test_silent_server_is_unavailable_within_the_timeout_retries_included(
    silent_server_url: str,
) -> None:
    embedder = make_embedder(silent_server_url, timeout_s=0.5)

    with anyio.fail_after(10), pytest.raises(BackendUnavailableError) as error:
        await embedder.embed_documents(["hello"])

    assert str(error.value) == (
        f"The embedding server at {silent_server_url} did not answer within 0.5 s (model 'test-embed'). "
        "Check that it is running and not overloaded, or raise HYBRID_MEMORY_EMBEDDING_TIMEOUT_S."
    )
    await embedder.close()


def test_openai_without_a_key_is_refused_up_front() -> None:
    with pytest.raises(BackendError) as error:
        OpenAIEmbedder(
            "text-embedding-3-small", base_url=None, api_key=None, dimension=None, timeout_s=5, batch_size=8
        )

    assert str(error.value) == (
        "The openai embedding provider needs an API key for OpenAI: set OPENAI_API_KEY "
        "(or HYBRID_MEMORY_EMBEDDING_API_KEY), or set HYBRID_MEMORY_EMBEDDING_BASE_URL to a local "
        "OpenAI-compatible server such as Ollama (http://localhost:11434/v1)."
    )


def test_token_counts_are_the_estimate_chunking_uses() -> None:
    embedder = make_embedder("http://127.0.0.1:1/v1")
    text = "Hello, world! " * 40

    chunks = chunk_text(text, max_tokens=20, overlap_tokens=3, token_spans=embedder.token_spans)

    assert embedder.count_tokens("Hello, world!") == 6
    assert all(embedder.count_tokens(chunk) <= 20 for chunk in chunks)


async def test_build_embedder_picks_the_openai_provider(
    server: EmbeddingsServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The key is read by its environment name only (the field has validation aliases).
    monkeypatch.setenv("HYBRID_MEMORY_EMBEDDING_API_KEY", "right-key")
    settings = EmbeddingSettings(
        provider="openai", model=MODEL, base_url=server.base_url, dimension=DIMENSION
    )

    embedder = build_embedder(settings)

    assert isinstance(embedder, OpenAIEmbedder)
    assert (embedder.model_name, embedder.dimension) == (MODEL, DIMENSION)
    assert await embedder.embed_query("hello") == pytest.approx(unit(fake_vector("hello")))
    assert server.requests[0]["authorization"] == "Bearer right-key"
    await embedder.close()
