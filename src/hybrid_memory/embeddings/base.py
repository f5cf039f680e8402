"""The embedder protocol: text in, unit-length vectors out."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol


class Embedder(Protocol):
    """Turns text into dense vectors. Implementations load their model lazily, off the event loop."""

    @property
    def model_name(self) -> str:
        """The name stored with the vectors, so a store can refuse a mismatched model."""
        ...

    @property
    def dimension(self) -> int: ...

    async def warm_up(self) -> None:
        """Load the model (or reach the service) now, so the first real call does not wait."""
        ...

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]: ...

    async def embed_query(self, text: str) -> list[float]: ...

    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` as this model counts them (an estimate where the model gives no tokenizer)."""
        ...

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        """Character offsets of each token of ``text`` (special tokens left out), for chunking."""
        ...

    async def close(self) -> None: ...
