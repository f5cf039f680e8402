"""Pseudo-relevance feedback for the keyword channels: a second search with the best hits' words.

A question rarely uses the words of its answer ("what activities ...?" against "we went
camping"); the turns the first round ranks best often do. Their terms join the query at a
fraction of a query term's weight and the keyword searches run once more; the store's IDF
keeps the common ones from counting much.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from hybrid_memory import ranking
from hybrid_memory.backends.base import VectorStore
from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.errors import BackendError
from hybrid_memory.models import Searches, SparseVector
from hybrid_memory.service.recall.channels import from_vectors, skip
from hybrid_memory.service.recall.config import RecallConfig
from hybrid_memory.service.recall.state import RecallState

DOCS = 3
"""How many of the first round's best candidates lend their words."""
TERMS = 20
"""At most this many borrowed terms: the ones most of those candidates share, then the heaviest."""
CHANNELS = ("keyword", "context")


def borrowed(query: SparseVector, docs: Sequence[SparseVector], *, weight: float, terms: int) -> SparseVector:
    """``query`` plus the ``docs``' other terms, each at ``weight`` times the share of docs holding it."""
    own = dict(zip(query.indices, query.values, strict=True))
    held: dict[int, int] = {}
    mass: dict[int, float] = {}
    for doc in docs:
        for index, value in zip(doc.indices, doc.values, strict=True):
            if index not in own:
                held[index] = held.get(index, 0) + 1
                mass[index] = mass.get(index, 0.0) + value
    best = sorted(held, key=lambda i: (-held[i], -mass[i], i))[:terms]
    added = {i: weight * held[i] / len(docs) for i in best}
    merged = {**own, **added}
    indices = sorted(merged)
    return SparseVector(indices=indices, values=[merged[i] for i in indices])


def centred(query: Sequence[float], docs: Sequence[Sequence[float]], *, weight: float) -> list[float]:
    """``query`` moved towards the mean of ``docs`` by ``weight`` (Rocchio); cosine ignores the length."""
    if not docs:
        return list(query)
    return [q + weight * sum(d[i] for d in docs) / len(docs) for i, q in enumerate(query)]


def seeds(state: RecallState, config: RecallConfig) -> list[str]:
    """The ids of the first round's best candidates, by the same fusion the ranking will use."""
    fused = ranking.score_fusion(state.channels, config.channel_weights())
    return [f.id for f in fused if f.id in state.memories][: config.feedback_docs]


async def apply(
    state: RecallState,
    config: RecallConfig,
    *,
    vectors: VectorStore,
    sparse: Bm25Encoder,
    dense: Sequence[float] | None = None,
) -> None:
    """Replace the first round's rankings by those of the query widened by the seeds' words and meaning."""
    words = [n for n in config.feedback_channels if n in state.channels] if config.feedback > 0 else []
    meaning = config.feedback_dense > 0 and dense is not None and "dense" in state.channels
    ids = seeds(state, config) if words or meaning else []
    if not ids:
        return
    beside = config.feedback_weight > 0
    if beside:
        words = words[:1]
    try:
        with anyio.fail_after(config.timeout_s):
            query = None
            if words:
                docs = [sparse.encode_document(state.memories[i].text) for i in ids]
                query = borrowed(sparse.encode_query(state.query), docs, weight=config.feedback, terms=TERMS)
            moved = None
            if meaning and dense is not None:
                found = await vectors.dense_vectors(state.scope, ids)
                moved = centred(dense, list(found.values()), weight=config.feedback_dense)
            searches = Searches(
                dense=moved,
                keyword=query if "keyword" in words else None,
                context=query if "context" in words else None,
            )
            results = await vectors.search_many(state.flt, state.candidates, searches)
    except (BackendError, TimeoutError) as exc:
        skip(state, "feedback", exc)  # the first round's rankings still stand
        return
    for name in [*words, *(["dense"] if meaning else [])]:
        found_hits = from_vectors(results[name])
        state.memories.update((m.id, m) for m in found_hits.memories)
        state.channels["feedback" if beside and name != "dense" else name] = found_hits.hits
