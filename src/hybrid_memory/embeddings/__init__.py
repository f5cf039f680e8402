"""Text to vectors: the :class:`Embedder` protocol, its providers, and chunking.

``build_embedder(settings.embedding)`` picks the provider; nothing loads or
connects until the embedder is first used (or warmed up). Each provider is
imported only when it is built or named: the ``openai`` SDK takes a third of a
second to import, fastembed's numpy and tokenizers a tenth, and the MCP handshake
needs neither.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.embeddings.chunking import TokenSpan, TokenSpans, approximate_token_spans, chunk_text
from hybrid_memory.settings import PACKAGED_MODEL_DIR, EmbeddingSettings

if TYPE_CHECKING:
    from hybrid_memory.embeddings.fastembed_provider import FastEmbedEmbedder
    from hybrid_memory.embeddings.openai_provider import OpenAIEmbedder

__all__ = [
    "PACKAGED_MODEL_DIR",
    "Embedder",
    "FastEmbedEmbedder",
    "OpenAIEmbedder",
    "TokenSpan",
    "TokenSpans",
    "approximate_token_spans",
    "build_embedder",
    "chunk_text",
]


def __getattr__(name: str) -> object:
    if name == "OpenAIEmbedder":
        from hybrid_memory.embeddings.openai_provider import OpenAIEmbedder

        return OpenAIEmbedder
    if name == "FastEmbedEmbedder":
        from hybrid_memory.embeddings.fastembed_provider import FastEmbedEmbedder

        return FastEmbedEmbedder
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def build_embedder(
    settings: EmbeddingSettings, *, cache_dir: Path | None = None
) -> FastEmbedEmbedder | OpenAIEmbedder:
    """The embedder ``settings`` ask for, not yet loaded or connected.

    With no settings at all this is the int8 all-MiniLM-L6-v2 shipped inside the
    package (:data:`PACKAGED_MODEL_DIR`), which needs no download.

    Args:
        settings: The ``HYBRID_MEMORY_EMBEDDING_*`` settings.
        cache_dir: Where fastembed keeps the models it downloads (e.g. under the
            data directory); fastembed's default, a temporary directory, if ``None``.

    Raises:
        BackendError: the openai provider for OpenAI itself without an API key.
    """
    if settings.provider == "openai":
        from hybrid_memory.embeddings.openai_provider import OpenAIEmbedder

        return OpenAIEmbedder(
            settings.model,
            base_url=settings.base_url,
            api_key=settings.api_key.get_secret_value() if settings.api_key is not None else None,
            dimension=settings.dimension,
            timeout_s=settings.timeout_s,
            batch_size=settings.texts_per_call,
        )
    from hybrid_memory.embeddings.fastembed_provider import FastEmbedEmbedder

    return FastEmbedEmbedder(
        settings.model,
        settings.model_path,
        threads=settings.threads,
        batch_size=settings.texts_per_call,
        cache_dir=cache_dir,
    )
