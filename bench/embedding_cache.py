"""An embedder wrapper that keeps every vector it made on disk, keyed by model and text (bench only).

LongMemEval's dev set is ~50k turns (~12M tokens): embedding it takes the better part of an
hour on one thread, so ablations that re-index the same texts read their vectors from here.
The product never caches vectors by text: a store's vectors are its own.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from hybrid_memory.embeddings.base import Embedder


class CachingEmbedder:
    """``Embedder`` over another one; texts already seen are not embedded again."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        self._inner = inner
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vector BLOB)")
        self.made = 0
        self.reused = 0

    @property
    def model_name(self) -> str:
        return self._inner.model_name

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    async def warm_up(self) -> None:
        await self._inner.warm_up()

    def _key(self, kind: str, text: str) -> bytes:
        return hashlib.sha1(f"{self.model_name}\x00{kind}\x00{text}".encode()).digest()

    async def _cached(self, kind: str, texts: Sequence[str]) -> list[list[float]]:
        keys = [self._key(kind, t) for t in texts]
        found: dict[bytes, list[float]] = {}
        for start in range(0, len(keys), 500):
            part = keys[start : start + 500]
            marks = ",".join("?" * len(part))
            for key, blob in self._db.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({marks})", part
            ):
                found[bytes(key)] = np.frombuffer(blob, dtype=np.float32).tolist()
        missing = list(dict.fromkeys(t for t, k in zip(texts, keys, strict=True) if k not in found))
        self.reused += len(texts) - len(missing)
        if missing:
            # Shortest first: a batch is padded to its longest text.
            ordered = sorted(missing, key=len)
            if kind == "query":
                made = [await self._inner.embed_query(t) for t in ordered]
            else:
                made = await self._inner.embed_documents(ordered)
            self.made += len(made)
            rows = [
                (self._key(kind, t), np.asarray(v, dtype=np.float32).tobytes())
                for t, v in zip(ordered, made, strict=True)
            ]
            self._db.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)", rows)
            self._db.commit()
            found.update((k, v) for (k, _), v in zip(rows, made, strict=True))
        return [found[k] for k in keys]

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return await self._cached("document", texts)

    async def embed_query(self, text: str) -> list[float]:
        return (await self._cached("query", [text]))[0]

    def count_tokens(self, text: str) -> int:
        return self._inner.count_tokens(text)

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return self._inner.token_spans(text)

    async def close(self) -> None:
        self._db.close()
        await self._inner.close()
