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
from typing import Any

import bm25s
import numpy as np
from bm25s.tokenization import Tokenizer
from py_rust_stemmers import SnowballStemmer  # type: ignore[import-untyped]  # fastembed's dependency

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.evaluation.locomo import Dataset, RetrieverRun

logger = logging.getLogger(__name__)

RRF_K = 60
BM25_K1 = 0.9
BM25_B = 0.4


def _bm25_tokenizer() -> Tokenizer:
    stemmer = SnowballStemmer("english")
    return Tokenizer(stopwords="en", stemmer=stemmer.stem_word)


def bm25_run(dataset: Dataset, depth: int) -> RetrieverRun:
    """BM25 over each conversation's turns; only turns sharing a term with the question are ranked."""
    run = RetrieverRun(name="bm25", ingest_s=0.0)
    for conv in dataset.conversations:
        turns = conv.turns
        started = perf_counter()
        tokenizer = _bm25_tokenizer()
        corpus = tokenizer.tokenize([t.content for t in turns], return_as="ids", show_progress=False)
        index = bm25s.BM25(k1=BM25_K1, b=BM25_B)
        index.index(corpus, show_progress=False)
        # bm25s maps unknown query words to the id of the empty token: drop it, or it matches empty turns.
        empty = tokenizer.get_vocab_dict().get("")
        run.ingest_s = (run.ingest_s or 0.0) + perf_counter() - started
        for question in conv.questions:
            started = perf_counter()
            ids = tokenizer.tokenize(
                [question.text], update_vocab=False, return_as="ids", show_progress=False
            )[0]
            ids = [i for i in ids if i != empty]
            ranked: list[str] = []
            if ids:
                docs, scores = index.retrieve([ids], k=min(depth, len(turns)), show_progress=False)
                ranked = [turns[int(d)].dia_id for d, s in zip(docs[0], scores[0], strict=True) if s > 0]
            run.latencies_s.append(perf_counter() - started)
            run.rankings[question.key] = ranked
    run.details = {
        "k1": BM25_K1,
        "b": BM25_B,
        "method": "lucene",
        "stemmer": "snowball-english",
        "stopwords": "en",
    }
    return run


async def dense_run(dataset: Dataset, embedder: Embedder, depth: int) -> RetrieverRun:
    """Exhaustive cosine search with the embedding model alone (no keyword, no fusion)."""
    run = RetrieverRun(name="dense", ingest_s=0.0)
    for conv in dataset.conversations:
        turns = conv.turns
        started = perf_counter()
        # Shortest first: a batch is padded to its longest text, so sorted batches waste far
        # less compute (2-2.5x faster here); each text's vector is the same either way.
        order = sorted(range(len(turns)), key=lambda i: len(turns[i].content))
        vectors = await embedder.embed_documents([turns[i].content for i in order])
        matrix = np.empty((len(turns), embedder.dimension), dtype=np.float32)
        matrix[order] = np.asarray(vectors, dtype=np.float32)
        matrix /= np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)
        run.ingest_s = (run.ingest_s or 0.0) + perf_counter() - started
        logger.info("dense baseline: %s embedded (%d turns)", conv.id, len(turns))
        for question in conv.questions:
            started = perf_counter()
            query = np.asarray(await embedder.embed_query(question.text), dtype=np.float32)
            scores = matrix @ query
            best = np.argsort(-scores, kind="stable")[:depth]
            run.latencies_s.append(perf_counter() - started)
            run.rankings[question.key] = [turns[int(i)].dia_id for i in best]
    run.details = {
        "model": embedder.model_name,
        "dimension": embedder.dimension,
        "search": "exhaustive cosine",
        "ingest": "one embed_documents call per conversation, texts sorted by length",
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
