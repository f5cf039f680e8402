"""BM25 keyword vectors, made in-process by Qdrant Edge's tokenizer.

The same vectors serve the embedded store and a Qdrant server: documents carry
term-frequency weights, queries one weight per term, and the store applies IDF
(sparse vectors with the IDF modifier), so the keyword channel is real BM25.
"""

from __future__ import annotations

import qdrant_edge

from hybrid_memory.models import SparseVector

# Our documents are chat turns and notes, a few dozen tokens each, not web pages:
# the length normaliser should be centred on that.
AVERAGE_DOCUMENT_TOKENS = 40.0

TERMS_KEPT = 2048
"""Texts whose terms an encoder keeps (recall asks again for the same hits' terms); full, it starts over."""
TERMS_KEPT_CHARS = 4000
"""The longest text whose terms are kept: the cache stays a few megabytes at most."""


class Bm25Encoder:
    """English BM25 with stemming and stop words; cheap, pure CPU, thread-safe."""

    def __init__(self, *, k: float = 1.2, b: float = 0.75, avg_len: float = AVERAGE_DOCUMENT_TOKENS) -> None:
        self._model = qdrant_edge.Bm25(qdrant_edge.Bm25Config(k=k, b=b, avg_len=avg_len, language="english"))
        self._terms: dict[str, tuple[int, ...]] = {}

    def encode_document(self, text: str) -> SparseVector:
        vector = self._model.embed_document(text)
        return SparseVector(indices=list(vector.indices), values=[float(v) for v in vector.values])

    def terms(self, text: str) -> list[int]:
        """The terms ``encode_document`` gives ``text`` (their indices), without their weights."""
        known = self._terms.get(text)
        if known is not None:
            return list(known)
        terms = list(self._model.embed_document(text).indices)
        if len(text) <= TERMS_KEPT_CHARS:
            if len(self._terms) >= TERMS_KEPT:
                self._terms.clear()
            self._terms[text] = tuple(terms)
        return terms

    def encode_query(self, text: str) -> SparseVector:
        vector = self._model.embed_query(text)
        return SparseVector(indices=list(vector.indices), values=[float(v) for v in vector.values])
