"""Recall as a pipeline: plan -> gather channels -> fuse -> expand -> resolve -> rank -> render."""

from __future__ import annotations

from collections.abc import Callable

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.errors import BackendError
from hybrid_memory.models import RecallResult, Scope, utcnow
from hybrid_memory.service.recall import channels, expand, state
from hybrid_memory.service.recall.config import RecallConfig, recall_config
from hybrid_memory.service.recall.state import RecallOptions
from hybrid_memory.settings import Settings


class Recaller:
    """Runs the recall channels concurrently and ranks what they return."""

    def __init__(
        self,
        *,
        settings: Settings,
        vectors: VectorStore,
        graph: GraphStore,
        embedder: Embedder,
        sparse: Bm25Encoder,
        validate_text: Callable[[str, str], str],
        config: RecallConfig | None = None,
    ) -> None:
        self._vectors = vectors
        self._graph = graph
        self._embedder = embedder
        self._sparse = sparse
        self._text = validate_text
        self.config = config or recall_config(settings.ranking, timeout_s=settings.backend_timeout_s)

    async def recall(self, scope: Scope, query: str, options: RecallOptions) -> RecallResult:
        """Hybrid recall: dense + keyword over memories, full text over notes, then their neighbours."""
        config = self.config
        s = state.plan(scope, self._text(query, "query"), options, options.as_of or utcnow(), config)
        dense: list[float] | None = None
        if config.dense.enabled:
            try:
                dense = await self._embedder.embed_query(s.query)
            except BackendError as exc:  # no model: the keyword channels need none and still answer
                channels.skip(s, "dense", exc)
        searches = channels.searches(
            s,
            config,
            vectors=self._vectors,
            graph=self._graph,
            dense=dense,
            sparse=self._sparse.encode_query(s.query),
        )
        await channels.gather(s, searches, config.timeout_s)
        state.fuse(s, config)
        if s.want_notes and config.neighbour.enabled and "graph" not in s.skipped:
            await expand.add_neighbours(s, self._graph, config)
        await expand.add_adjacent(s, self._vectors, config)
        await expand.resolve(s, self._vectors, self._graph, config.timeout_s)
        state.rank(s, config)
        await expand.add_successors(s, self._graph, config.timeout_s)
        await expand.add_context(s, self._vectors, config.timeout_s)
        return state.render(s)
