"""Recall as a pipeline: plan -> gather -> read what can rank -> fuse -> expand -> resolve -> rank."""

from __future__ import annotations

import anyio

from hybrid_memory.errors import BackendError
from hybrid_memory.models import RecallResult, Scope, utcnow
from hybrid_memory.service.recall import channels, depth, expand, feedback, state
from hybrid_memory.service.recall.config import RecallConfig, recall_config
from hybrid_memory.service.recall.state import RecallOptions
from hybrid_memory.service.stores import Stores
from hybrid_memory.service.writes import validation
from hybrid_memory.settings import Settings


class Recaller:
    """Runs the recall channels concurrently and ranks what they return."""

    def __init__(self, *, settings: Settings, stores: Stores, config: RecallConfig | None = None) -> None:
        self._stores = stores
        self._max_chars = settings.max_content_chars
        self.config = config or recall_config(settings.ranking, timeout_s=settings.backend_timeout_s)
        self._last_vector: tuple[str, list[float]] | None = None
        """The last query embedded and its vector: a prompt recalled again over the notes is not
        embedded twice."""
        self._embedding = anyio.Lock()
        """Held while a query is embedded: the same query recalled twice at once waits for its vector."""

    async def recall(self, scope: Scope, query: str, options: RecallOptions) -> RecallResult:
        """Hybrid recall: dense + keyword over memories, full text over notes, then their neighbours."""
        config = self.config
        s = state.plan(
            scope,
            validation.query(query, self._max_chars),
            options,
            options.as_of or utcnow(),
            config,
        )
        encoder = self._stores.indexer.sparse
        sparse = encoder.encode_query(s.query)
        s.query_terms = frozenset(sparse.indices)
        s.terms = encoder.terms
        vectors = self._stores.vectors
        # The notes' full text and the keyword channels need no vector: searched while the query is embedded.
        words = {
            **channels.note_search(s, config, self._stores.graph),
            **channels.searches(
                s, config, vectors=vectors, dense=None, sparse=sparse, names=channels.KEYWORD_CHANNELS
            ),
        }
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._words, s, words, config)
            dense = await self._query_vector(s, config)
        searches = channels.searches(s, config, vectors=vectors, dense=dense, sparse=sparse, names=("dense",))
        await channels.gather(s, searches, config.timeout_s)
        channels.settle(s)
        await depth.read(s, self._stores.vectors, config, config.timeout_s)
        await feedback.apply(s, config, vectors=self._stores.vectors, encoder=encoder, query=sparse)
        state.fuse(s, config)
        depth.drop_unread(s)
        if s.want_notes and config.neighbour.enabled and "graph" not in s.skipped:
            await expand.add_neighbours(s, self._stores.graph, config)
            await expand.add_cited(s, self._stores.vectors, config)
        await expand.add_adjacent(s, self._stores.vectors, config)
        await expand.resolve(s, self._stores.vectors, self._stores.graph, config.timeout_s)
        state.rank(s, config)
        await expand.add_successors(s, self._stores.graph, config.timeout_s)
        await expand.add_context(s, self._stores.vectors, config.timeout_s)
        return state.render(s)

    async def _words(
        self, s: state.RecallState, words: dict[str, channels.Search], config: RecallConfig
    ) -> None:
        """The channels that need no vector, then the memories of their best candidates."""
        await channels.gather(s, words, config.timeout_s)
        await depth.prefetch(s, self._stores.vectors, config.timeout_s)

    async def _query_vector(self, s: state.RecallState, config: RecallConfig) -> list[float] | None:
        if not config.dense.enabled:
            return None
        async with self._embedding:
            if self._last_vector is not None and self._last_vector[0] == s.query:
                return self._last_vector[1]
            try:
                vector = await self._stores.embedder.embed_query(s.query)
            except BackendError as exc:  # no model: the keyword channels need none and still answer
                channels.skip(s, "dense", exc)
                return None
            self._last_vector = (s.query, vector)
            return vector
