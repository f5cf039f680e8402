"""Single-channel baselines, on the same turn texts and scored the same way as the server.

- ``bm25``: Okapi BM25 (``bm25s``, Lucene variant) over each conversation's
  turns, English stop words, Snowball stemming, with Anserini's defaults
  k1=0.9, b=0.4: on LoCoMo's short turns they beat bm25s's own k1=1.5, b=0.75
  (R@10 .578 against .550), and a baseline should be the strong one.
- ``dense``: cosine similarity of the configured embedding model (the server's
  own, built by :func:`hybrid_memory.embeddings.build_embedder`), exhaustive.
- ``rrf(bm25,dense)``: plain reciprocal-rank fusion of the two, k=60, the
  textbook hybrid the server's ranker has to beat.

Each runs in this process, in the same run as the server, so the table compares
like with like: same turns, same questions, same repaired evidence.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from time import perf_counter
from typing import Any, NamedTuple

import bm25s
import numpy as np
from bm25s.tokenization import Tokenizer
from py_rust_stemmers import SnowballStemmer  # type: ignore[import-untyped]  # fastembed's dependency

from hybrid_memory.embeddings import build_embedder
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.evaluation.locomo import Dataset, RetrieverRun
from hybrid_memory.evaluation.longmemeval import Item
from hybrid_memory.settings import EmbeddingSettings

logger = logging.getLogger(__name__)

RRF_K = 60
BM25_K1 = 0.9
BM25_B = 0.4
BM25_DETAILS = {
    "k1": BM25_K1,
    "b": BM25_B,
    "method": "lucene",
    "stemmer": "snowball-english",
    "stopwords": "en",
}


def _bm25_tokenizer() -> Tokenizer:
    stemmer = SnowballStemmer("english")
    return Tokenizer(stopwords="en", stemmer=stemmer.stem_word)


class Bm25Index:
    """BM25 over one corpus of texts; only texts sharing a term with the query are ranked."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._tokenizer = _bm25_tokenizer()
        corpus = self._tokenizer.tokenize(list(texts), return_as="ids", show_progress=False)
        self._index = bm25s.BM25(k1=BM25_K1, b=BM25_B)
        self._index.index(corpus, show_progress=False)
        self._size = len(texts)
        # bm25s maps unknown query words to the id of the empty token: drop it, or it matches empty texts.
        self._empty = self._tokenizer.get_vocab_dict().get("")

    def rank(self, query: str, depth: int) -> list[int]:
        """Positions of the best ``depth`` texts for ``query``, best first."""
        ids = self._tokenizer.tokenize([query], update_vocab=False, return_as="ids", show_progress=False)[0]
        ids = [i for i in ids if i != self._empty]
        if not ids:
            return []
        docs, scores = self._index.retrieve([ids], k=min(depth, self._size), show_progress=False)
        return [int(d) for d, s in zip(docs[0], scores[0], strict=True) if s > 0]


def bm25_rankings(
    corpora: Mapping[str, Sequence[tuple[str, str]]], queries: Mapping[str, str], depth: int
) -> dict[str, list[str]]:
    """Per key, BM25 over that key's ``(id, text)`` corpus for that key's query: the ranked ids."""
    out = {}
    for key, query in queries.items():
        corpus = corpora[key]
        index = Bm25Index([text for _, text in corpus])
        out[key] = [corpus[i][0] for i in index.rank(query, depth)]
    return out


class Haystack(NamedTuple):
    """Turns searched together, and the questions asked of them: a LoCoMo conversation, a LongMemEval item."""

    name: str
    ids: list[str]
    texts: list[str]
    questions: list[tuple[str, str]]
    """(question key, question text)."""


def locomo_haystacks(dataset: Dataset) -> list[Haystack]:
    return [
        Haystack(
            conv.id,
            [t.dia_id for t in conv.turns],
            [t.content for t in conv.turns],
            [(q.key, q.text) for q in conv.questions],
        )
        for conv in dataset.conversations
    ]


def item_haystacks(items: Sequence[Item]) -> list[Haystack]:
    return [
        Haystack(
            item.id, [t.id for t in item.turns], [t.content for t in item.turns], [(item.id, item.question)]
        )
        for item in items
    ]


async def baseline_runs(
    haystacks: Sequence[Haystack], embedding: EmbeddingSettings, depth: int
) -> list[RetrieverRun]:
    """BM25, dense (the configured model, loaded here) and their RRF, over the same haystacks."""
    bm25 = bm25_run(haystacks, depth)
    embedder = build_embedder(embedding)
    try:
        dense = await dense_run(haystacks, embedder, depth)
    finally:
        await embedder.close()
    return [bm25, dense, rrf_run("rrf(bm25,dense)", [bm25, dense], depth)]


def bm25_run(haystacks: Sequence[Haystack], depth: int) -> RetrieverRun:
    """BM25 over each haystack's turns; only turns sharing a term with the question are ranked."""
    run = RetrieverRun(name="bm25", ingest_s=0.0, details=dict(BM25_DETAILS))
    for haystack in haystacks:
        started = perf_counter()
        index = Bm25Index(haystack.texts)
        run.ingest_s = (run.ingest_s or 0.0) + perf_counter() - started
        for key, question in haystack.questions:
            started = perf_counter()
            ranked = [haystack.ids[i] for i in index.rank(question, depth)]
            run.latencies_s.append(perf_counter() - started)
            run.rankings[key] = ranked
    return run


async def _matrix(embedder: Embedder, texts: Sequence[str]) -> Any:
    """The texts' unit vectors as rows, in order."""
    # Shortest first: a batch is padded to its longest text, so sorted batches waste far
    # less compute (2-2.5x faster here); each text's vector is the same either way.
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    vectors = await embedder.embed_documents([texts[i] for i in order])
    matrix = np.empty((len(texts), embedder.dimension), dtype=np.float32)
    matrix[order] = np.asarray(vectors, dtype=np.float32)
    matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
    return matrix


async def dense_run(haystacks: Sequence[Haystack], embedder: Embedder, depth: int) -> RetrieverRun:
    """Exhaustive cosine search with the embedding model alone (no keyword, no fusion)."""
    run = RetrieverRun(name="dense", ingest_s=0.0)
    for haystack in haystacks:
        started = perf_counter()
        matrix = await _matrix(embedder, haystack.texts)
        run.ingest_s = (run.ingest_s or 0.0) + perf_counter() - started
        logger.info("dense baseline: %s embedded (%d turns)", haystack.name, len(haystack.texts))
        for key, question in haystack.questions:
            started = perf_counter()
            query = np.asarray(await embedder.embed_query(question), dtype=np.float32)
            best = np.argsort(-(matrix @ query), kind="stable")[:depth]
            run.latencies_s.append(perf_counter() - started)
            run.rankings[key] = [haystack.ids[int(i)] for i in best]
    run.details = {
        "model": embedder.model_name,
        "dimension": embedder.dimension,
        "search": "exhaustive cosine",
        "ingest": "one embed_documents call per conversation or item, texts sorted by length",
    }
    return run


def rrf_fuse(rankings: Sequence[Sequence[str]], *, k: int = RRF_K) -> list[str]:
    """Reciprocal-rank fusion: each list adds ``1 / (k + rank)``; ties by best single rank, then id."""
    totals: dict[str, float] = {}
    best: dict[str, int] = {}
    for ranked in rankings:
        for rank, item in enumerate(ranked, start=1):
            totals[item] = totals.get(item, 0.0) + 1.0 / (k + rank)
            best[item] = min(best.get(item, rank), rank)
    return sorted(totals, key=lambda i: (-totals[i], best[i], i))


def rrf_run(name: str, runs: Sequence[RetrieverRun], depth: int, *, k: int = RRF_K) -> RetrieverRun:
    """Fuse already computed runs question by question (their latencies and ingest times add up)."""
    keys: Mapping[str, Any] = runs[0].rankings
    fused = RetrieverRun(name=name)
    fused.rankings = {key: rrf_fuse([r.rankings.get(key, []) for r in runs], k=k)[:depth] for key in keys}
    if all(len(r.latencies_s) == len(runs[0].latencies_s) for r in runs):
        fused.latencies_s = [sum(parts) for parts in zip(*(r.latencies_s for r in runs), strict=True)]
    fused.ingest_s = sum(r.ingest_s or 0.0 for r in runs)
    fused.details = {"k": k, "of": [r.name for r in runs]}
    return fused
