"""Memories into stored records: the one way anything reaches the vector store.

A record is a memory with its dense vector and its BM25 vector. A thread message
that follows another in the same remember call (its first chunk, ``prev_id`` set)
is also indexed with its *context*: the tail of the memory before it, so a short
reply ("yes, do that") is found by the words of the turn it answers. The context
is derived from the stored ``prev_id`` chain alone, so whoever writes a memory
(remember_thread, notes, eviction summaries, tasks, import) stores the same record.

The dense vector of a message with a context is its own text's vector plus
:data:`CONTEXT_WEIGHT` times its tail's, made unit length again: the model's cost
grows with the tokens it reads, and a turn's tail is usually the whole turn before it,
already embedded in the same call, so a thread is embedded once instead of twice.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from hybrid_memory.backends.base import VectorStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.models import Memory, MemoryKind, MemoryRecord, Scope
from hybrid_memory.service.usage import Usage

# How much of the previous message joins a message's context (about 100 tokens): enough for
# the question a reply answers, not so much that it drowns the reply.
CONTEXT_CHARS = 400


def context_tail(previous: str) -> str:
    """The part of the previous memory's text that joins the next one's context: its last words."""
    tail = previous[-CONTEXT_CHARS:]
    # Cut at a word boundary, unless the whole text fits.
    cut = tail.find(" ") if len(previous) > CONTEXT_CHARS else -1
    return tail[cut + 1 :]


# How much the tail's vector weighs beside the message's own (1.0) in its dense vector.
CONTEXT_WEIGHT = 0.5


def with_context(tail: str, text: str) -> str:
    return f"{tail}\n{text}"


def mix(own: Sequence[float], tail: Sequence[float]) -> list[float]:
    """A message's dense vector: its own vector plus the weighted tail's, unit length."""
    total = [a + CONTEXT_WEIGHT * b for a, b in zip(own, tail, strict=True)]
    norm = math.hypot(*total) or 1.0
    return [x / norm for x in total]


def needs_context(memory: Memory) -> bool:
    """A message's first chunk that follows another memory of its thread."""
    return memory.kind is MemoryKind.MESSAGE and memory.chunk_index == 0 and memory.prev_id is not None


class Indexer:
    """Embeds memories (dense + BM25, with their context) and writes them to the vector store."""

    def __init__(
        self,
        *,
        vectors: VectorStore,
        embedder: Embedder,
        sparse: Bm25Encoder | None = None,
        usage: Usage | None = None,
    ) -> None:
        self._vectors = vectors
        self._embedder = embedder
        self.sparse = sparse or Bm25Encoder()
        self.usage = usage or Usage()
        # The vector of the last call's last text: a thread remembered in batches embeds a
        # batch's last message, the next batch's first context, only once.
        self._recent: dict[str, list[float]] = {}

    async def tails(
        self, memories: Sequence[Memory], known: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        """Memory id -> the context tail it is indexed with; ``known``: tails by previous memory id.

        A previous memory neither known nor in ``memories`` is read from the store.
        """
        known = dict(known or {})
        known.update((m.id, context_tail(m.text)) for m in memories)
        wanted = [m for m in memories if needs_context(m)]
        missing: dict[Scope, list[str]] = {}
        for m in wanted:
            if m.prev_id not in known:
                missing.setdefault(Scope(project=m.project, user=m.user), []).append(str(m.prev_id))
        for scope, ids in missing.items():
            known.update((p.id, context_tail(p.text)) for p in await self._vectors.get(scope, ids))
        return {m.id: known[str(m.prev_id)] for m in wanted if m.prev_id in known}

    async def records(
        self,
        memories: Sequence[Memory],
        *,
        dense: Sequence[list[float] | None] | None = None,
        known: Mapping[str, str] | None = None,
    ) -> list[MemoryRecord]:
        """The stored records of ``memories``; ``dense``: vectors already made (None: embed it).

        A vector already made must be the memory's stored vector (its context mixed in, see
        :func:`mix`), as an export with embeddings carries it.
        """
        tails = await self.tails(memories, known)
        given = list(dense) if dense is not None else [None] * len(memories)
        to_embed = [m for m, d in zip(memories, given, strict=True) if d is None]
        # Each distinct text once: a tail is mostly the previous turn's whole text.
        wanted = [m.text for m in to_embed] + [tails[m.id] for m in to_embed if m.id in tails]
        made = {text: self._recent[text] for text in wanted if text in self._recent}
        unique = [text for text in dict.fromkeys(wanted) if text not in made]
        if unique:
            made.update(zip(unique, await self._embedder.embed_documents(unique), strict=True))
        last = memories[-1].text if memories else ""
        self._recent = {last: made[last]} if last in made else {}
        fresh = {
            m.id: mix(made[m.text], made[tails[m.id]]) if m.id in tails else made[m.text] for m in to_embed
        }
        return [
            MemoryRecord(
                memory=m,
                dense=d if d is not None else fresh[m.id],
                sparse=self.sparse.encode_document(m.text),
                sparse_context=(
                    self.sparse.encode_document(with_context(tails[m.id], m.text)) if m.id in tails else None
                ),
            )
            for m, d in zip(memories, given, strict=True)
        ]

    async def store(
        self,
        memories: Sequence[Memory],
        *,
        dense: Sequence[list[float] | None] | None = None,
        known: Mapping[str, str] | None = None,
    ) -> None:
        """Index ``memories`` (see :meth:`records`) and write them, counted in the scopes' usage."""
        if not memories:
            return
        await self._vectors.upsert(await self.records(memories, dense=dense, known=known))
        self.usage.added(memories)
