"""Embeddings from an OpenAI-compatible server: OpenAI itself, or Ollama, vLLM,
LM Studio and the like behind ``base_url``.

Vectors come back unit-length whatever the server does (Ollama's are not). Token
counts are estimates (:func:`approximate_token_spans`, about four characters a
token): such servers run many tokenizers and expose none, and ``tiktoken`` is not
a dependency (it downloads its tables on first use and only knows OpenAI's models).
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence

import anyio
import openai
from openai.types import CreateEmbeddingResponse

from hybrid_memory.embeddings.chunking import TokenSpan, approximate_token_spans
from hybrid_memory.errors import BackendError, BackendUnavailableError

logger = logging.getLogger(__name__)

OPENAI_BASE_URL = "https://api.openai.com/v1"

KNOWN_DIMENSIONS: dict[str, int] = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}
"""OpenAI's own models, whose dimension needs no probe request."""

_PROBE_TEXT = "What is the dimension of this vector?"


class OpenAIEmbedder:
    """An :class:`~hybrid_memory.embeddings.base.Embedder` over an OpenAI-compatible ``/embeddings`` endpoint.

    Args:
        model: The model's name on the server (``text-embedding-3-small``, ``nomic-embed-text``).
        base_url: The API root, ``.../v1`` (Ollama: ``http://localhost:11434/v1``);
            ``None`` for OpenAI.
        api_key: The bearer key; may be ``None`` for a local server, not for OpenAI.
        dimension: The vectors' length if known; else it is learnt from the
            server's first answer (see :meth:`warm_up`).
        timeout_s: The most one embedding request may take, retries included.
        batch_size: Texts per request.
        max_retries: How often the client retries a failed request (rate limits,
            5xx, dropped connections) within ``timeout_s``.

    Raises:
        BackendError: OpenAI without an API key.
    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None,
        api_key: str | None,
        dimension: int | None,
        timeout_s: float,
        batch_size: int,
        max_retries: int = 2,
    ) -> None:
        if timeout_s <= 0 or batch_size < 1 or max_retries < 0 or (dimension is not None and dimension < 1):
            raise ValueError(
                f"Invalid OpenAIEmbedder options: timeout_s={timeout_s}, batch_size={batch_size}, "
                f"max_retries={max_retries}, dimension={dimension}"
            )
        if base_url is None and not api_key:
            raise BackendError(
                "The openai embedding provider needs an API key for OpenAI: set OPENAI_API_KEY "
                "(or HYBRID_MEMORY_EMBEDDING_API_KEY), or set HYBRID_MEMORY_EMBEDDING_BASE_URL to a "
                "local OpenAI-compatible server such as Ollama (http://localhost:11434/v1)."
            )
        self._model_name = model
        self._base_url = (base_url or OPENAI_BASE_URL).rstrip("/")
        # Local servers ignore the key, but the client insists on having one.
        self._api_key = api_key or "no-key"
        self._dimension = dimension or KNOWN_DIMENSIONS.get(model)
        self._timeout_s = timeout_s
        self._batch_size = batch_size
        self._max_retries = max_retries
        self._client: openai.AsyncOpenAI | None = None
        self._probe_lock = anyio.Lock()

    @property
    def model_name(self) -> str:
        """The model's name on the server, stored with the vectors it makes."""
        return self._model_name

    @property
    def dimension(self) -> int:
        """The vectors' length: as configured, known for OpenAI's models, or learnt from the server.

        Raises:
            BackendError: not known yet; :meth:`warm_up` asks the server.
        """
        if self._dimension is None:
            raise BackendError(
                f"The dimension of the embedding model {self._model_name!r} is not known until the server "
                f"at {self._base_url} has answered once (warm_up). Set HYBRID_MEMORY_EMBEDDING_DIMENSION "
                "to the model's vector length to open the store without asking it."
            )
        return self._dimension

    async def warm_up(self) -> None:
        """Learn the dimension by embedding a probe text, once, if it is not known yet.

        Raises:
            BackendUnavailableError: the server could not be reached in time.
            BackendError: the server refused or failed.
        """
        if self._dimension is not None:
            return
        async with self._probe_lock:
            # Whoever waited for the lock finds the dimension learnt already.
            if self._dimension is None:
                await self._embed_batch([_PROBE_TEXT])

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Unit-length vectors for ``texts``, in order, ``batch_size`` texts per request.

        Raises:
            BackendUnavailableError: the server could not be reached in time.
            BackendError: the server refused or failed, or answered with the wrong shape.
        """
        if isinstance(texts, str):
            raise TypeError("embed_documents takes a sequence of texts; use embed_query for one string")
        vectors: list[list[float]] = []
        # One request after another: local servers embed one batch at a time anyway.
        for offset in range(0, len(texts), self._batch_size):
            vectors += await self._embed_batch(list(texts[offset : offset + self._batch_size]))
        return vectors

    async def embed_query(self, text: str) -> list[float]:
        """A unit-length vector for a search query.

        Raises:
            BackendUnavailableError: the server could not be reached in time.
            BackendError: the server refused or failed.
        """
        return (await self._embed_batch([text]))[0]

    def count_tokens(self, text: str) -> int:
        """An estimate of ``text``'s tokens: one per four characters of a word and per punctuation mark."""
        return len(approximate_token_spans(text))

    def token_spans(self, text: str) -> list[TokenSpan]:
        """The estimated tokens' character spans, for :func:`chunk_text`; as :meth:`count_tokens` counts."""
        return approximate_token_spans(text)

    async def close(self) -> None:
        """Close the HTTP connections; a later call opens new ones."""
        client, self._client = self._client, None
        if client is not None:
            await client.close()

    def _get_client(self) -> openai.AsyncOpenAI:
        # Made on first use, in the event loop that uses it, never in __init__.
        if self._client is None:
            self._client = openai.AsyncOpenAI(
                api_key=self._api_key,
                base_url=self._base_url,
                timeout=self._timeout_s,
                max_retries=self._max_retries,
            )
        return self._client

    async def _embed_batch(self, texts: list[str]) -> list[list[float]]:
        client = self._get_client()
        try:
            # The client's timeout bounds each attempt; this bounds them all together.
            with anyio.fail_after(self._timeout_s):
                response = await client.embeddings.create(
                    model=self._model_name, input=texts, encoding_format="float"
                )
        except (TimeoutError, openai.APITimeoutError) as exc:
            raise BackendUnavailableError(
                f"The embedding server at {self._base_url} did not answer within {self._timeout_s:g} s "
                f"(model {self._model_name!r}). Check that it is running and not overloaded, or raise "
                "HYBRID_MEMORY_EMBEDDING_TIMEOUT_S."
            ) from exc
        except openai.APIConnectionError as exc:
            raise BackendUnavailableError(
                f"Cannot connect to the embedding server at {self._base_url} (model {self._model_name!r}). "
                "Start it, or set HYBRID_MEMORY_EMBEDDING_BASE_URL to a running OpenAI-compatible server."
            ) from exc
        except openai.APIStatusError as exc:
            raise self._status_error(exc) from exc
        except openai.OpenAIError as exc:
            raise BackendError(
                f"The embedding server at {self._base_url} gave an unusable answer for model "
                f"{self._model_name!r}: {exc}"
            ) from exc
        return self._unit_vectors(response, len(texts))

    def _status_error(self, exc: openai.APIStatusError) -> BackendError:
        where = f"The embedding server at {self._base_url}"
        status = exc.status_code
        if status in (401, 403):
            return BackendError(
                f"{where} refused the API key for model {self._model_name!r} (HTTP {status}). "
                "Set OPENAI_API_KEY or HYBRID_MEMORY_EMBEDDING_API_KEY to a valid key."
            )
        if status == 404:
            return BackendError(
                f"{where} has no model {self._model_name!r} (HTTP 404). Set HYBRID_MEMORY_EMBEDDING_MODEL "
                "to a model it serves (with Ollama, pull it first), and check that "
                "HYBRID_MEMORY_EMBEDDING_BASE_URL ends in /v1."
            )
        return BackendError(
            f"{where} failed to embed with model {self._model_name!r}: HTTP {status}: {_server_message(exc)}"
        )

    def _unit_vectors(self, response: CreateEmbeddingResponse, expected: int) -> list[list[float]]:
        items = sorted(response.data, key=lambda item: item.index)
        if len(items) != expected:
            raise BackendError(
                f"The embedding server at {self._base_url} returned {len(items)} vectors for {expected} "
                f"texts (model {self._model_name!r})."
            )
        lengths = {len(item.embedding) for item in items}
        if len(lengths) != 1 or 0 in lengths:
            raise BackendError(
                f"The embedding server at {self._base_url} returned vectors of lengths {sorted(lengths)} "
                f"(model {self._model_name!r})."
            )
        (length,) = lengths
        if self._dimension is None:
            logger.info(
                "Embedding model %s at %s makes %d-dim vectors", self._model_name, self._base_url, length
            )
            self._dimension = length
        elif length != self._dimension:
            raise BackendError(
                f"The embedding model {self._model_name!r} at {self._base_url} returned {length}-dimensional "
                f"vectors, not {self._dimension}. Set HYBRID_MEMORY_EMBEDDING_DIMENSION={length} "
                "(a store filled with other vectors must then be re-embedded through export and import)."
            )
        return [_unit(item.embedding) for item in items]


def _unit(vector: list[float]) -> list[float]:
    norm = math.hypot(*vector)
    return [value / norm for value in vector] if norm else list(vector)


def _server_message(exc: openai.APIStatusError) -> str:
    """The server's own words: OpenAI's ``{"error": {"message": ...}}``, else the raw body, shortened."""
    body = exc.body
    if isinstance(body, dict):
        message = body.get("message")
        if not isinstance(message, str) and isinstance(body.get("error"), dict):
            message = body["error"].get("message")
        if isinstance(message, str) and message:
            return message
    text = exc.response.text.strip()
    return text[:300] if text else exc.response.reason_phrase or "no details"
