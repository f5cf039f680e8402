"""Pseudo-relevance feedback for the keyword channels: a second search with the best hits' words.

A question rarely uses the words of its answer ("what activities ...?" against "we went
camping"); the turns the first round ranks best often do. Their terms join the query at a
fraction of a query term's weight and the keyword searches run once more, their rankings
replacing the first round's; the store's IDF keeps the common terms from counting much.
"""

from __future__ import annotations

from collections.abc import Sequence

import anyio

from hybrid_memory.backends.base import VectorStore
from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.errors import BackendError
from hybrid_memory.models import Searches, SparseVector
from hybrid_memory.service.recall import ranking
from hybrid_memory.service.recall.channels import absorb, from_vectors, skip
from hybrid_memory.service.recall.config import RecallConfig
from hybrid_memory.service.recall.state import RecallState

TERMS = 20
"""At most this many borrowed terms: the ones most seeds share, then the heaviest."""
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
    merged = own | {i: weight * held[i] / len(docs) for i in best}
    indices = sorted(merged)
    return SparseVector(indices=indices, values=[merged[i] for i in indices])


def seeds(state: RecallState, config: RecallConfig) -> list[str]:
    """The texts of the first round's best candidates, by the fusion the ranking starts from."""
    fused = ranking.score_fusion(state.channels, config.channel_weights())
    return [state.memories[f.id].text for f in fused if f.id in state.memories][: config.feedback_docs]


async def apply(
    state: RecallState,
    config: RecallConfig,
    *,
    vectors: VectorStore,
    encoder: Bm25Encoder,
    query: SparseVector,
) -> None:
    """Replace the keyword channels' rankings by those of ``query`` (the first round's sparse query)
    widened with the seeds' words."""
    wanted = [name for name in CHANNELS if name in state.channels] if config.feedback > 0 else []
    texts = seeds(state, config) if wanted else []
    if not texts:
        return
    docs = [encoder.encode_document(t) for t in texts]
    widened = borrowed(query, docs, weight=config.feedback, terms=TERMS)
    searches = Searches(
        keyword=widened if "keyword" in wanted else None, context=widened if "context" in wanted else None
    )
    try:
        with anyio.fail_after(config.timeout_s):
            results = await vectors.search_many(state.flt, state.candidates, searches)
    except (BackendError, TimeoutError) as exc:
        skip(state, "feedback", exc)  # the first round's rankings still stand
        return
    for name in wanted:
        absorb(state, name, from_vectors(results[name]))
