"""Stand-ins for tests of logic: an embedder that needs no model.

Behaviour a user sees is tested with the real model; these make the service tests fast.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence

# One token per word or punctuation mark: counts are easy to predict in a test.
_TOKEN = re.compile(r"\w+|[^\w\s]")


class FakeEmbedder:
    """A deterministic hashed bag of words, unit length: the same words give the same vector.

    Texts sharing words are close, texts sharing none are orthogonal (up to hash
    collisions), so near-duplicate checks and dense ranking behave as with a model,
    only without meaning: synonyms are as far apart as any other words.
    """

    def __init__(self, dimension: int = 384, model_name: str = "fake/hashed-bag-of-words") -> None:
        self._dimension = dimension
        self._model_name = model_name

    @property
    def model_name(self) -> str:
        return self._model_name

    @property
    def dimension(self) -> int:
        return self._dimension

    async def warm_up(self) -> None:
        return None

    def _vector(self, text: str) -> list[float]:
        vector = [0.0] * self._dimension
        for match in _TOKEN.finditer(text.lower()):
            digest = hashlib.blake2b(match.group().encode(), digest_size=8).digest()
            value = int.from_bytes(digest, "big")
            vector[value % self._dimension] += 1.0 if value & (1 << 63) else -1.0
        norm = math.sqrt(sum(v * v for v in vector))
        if norm == 0:
            vector[0], norm = 1.0, 1.0
        return [v / norm for v in vector]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    async def embed_query(self, text: str) -> list[float]:
        return self._vector(text)

    def count_tokens(self, text: str) -> int:
        return len(self.token_spans(text))

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return [match.span() for match in _TOKEN.finditer(text)]

    async def close(self) -> None:
        return None
