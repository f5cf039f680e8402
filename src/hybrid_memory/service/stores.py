"""The stores and the model every service part works over, built once by MemoryService."""

from __future__ import annotations

from dataclasses import dataclass

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.service.indexer import Indexer


@dataclass(frozen=True)
class Stores:
    vectors: VectorStore
    graph: GraphStore
    embedder: Embedder
    indexer: Indexer
    """Writes memories with their dense and sparse vectors; shared so its usage counts are one."""

    @classmethod
    def over(
        cls, vectors: VectorStore, graph: GraphStore, embedder: Embedder, sparse: Bm25Encoder | None = None
    ) -> Stores:
        return cls(vectors, graph, embedder, Indexer(vectors=vectors, embedder=embedder, sparse=sparse))
