"""The indexer's records: a reply's dense vector carries the turn before it, each text embedded once."""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime

import pytest

from hybrid_memory.backends.in_memory_vectors import InMemoryVectorStore
from hybrid_memory.models import Memory, MemoryKind
from hybrid_memory.service.indexer import CONTEXT_WEIGHT, Indexer
from tests.fakes import FakeEmbedder

T0 = datetime(2024, 1, 1, tzinfo=UTC)


class CountingEmbedder(FakeEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        self.embedded.extend(texts)
        return await super().embed_documents(texts)


def message(mid: str, text: str, prev_id: str | None = None) -> Memory:
    return Memory(
        id=mid,
        kind=MemoryKind.MESSAGE,
        text=text,
        project="p",
        user="u",
        thread_id="t",
        message_id=mid,
        chunk_index=0,
        chunk_count=1,
        created_at=T0,
        prev_id=prev_id,
    )


async def test_a_reply_is_embedded_with_the_turn_before_it_and_each_text_once() -> None:
    embedder = CountingEmbedder()
    indexer = Indexer(vectors=InMemoryVectorStore(), embedder=embedder)
    question = message("a", "which trail did Maya recommend?")
    reply = message("b", "the ridge one", prev_id="a")

    records = await indexer.records([question, reply])

    assert embedder.embedded == [question.text, reply.text]
    own, tail = await embedder.embed_documents([reply.text, question.text])
    total = [a + CONTEXT_WEIGHT * b for a, b in zip(own, tail, strict=True)]
    norm = math.sqrt(sum(x * x for x in total))
    assert records[1].dense == pytest.approx([x / norm for x in total])
    assert records[0].dense == tail
    assert records[0].sparse_context is None
    assert records[1].sparse_context is not None


async def test_a_reply_whose_question_is_stored_embeds_the_question_tail() -> None:
    embedder = CountingEmbedder()
    vectors = InMemoryVectorStore()
    await vectors.open(dimension=embedder.dimension, model=embedder.model_name)
    indexer = Indexer(vectors=vectors, embedder=embedder)
    long_question = "word " * 150 + "which trail?"
    question_id = str(uuid.uuid4())
    await indexer.store([message(question_id, long_question)])
    embedder.embedded.clear()

    await indexer.records([message(str(uuid.uuid4()), "the ridge one", prev_id=question_id)])

    [own, tail] = embedder.embedded
    assert own == "the ridge one"
    assert long_question.endswith(tail)
    assert len(tail) < len(long_question)


async def test_the_next_batch_of_a_thread_does_not_embed_the_last_turn_again() -> None:
    embedder = CountingEmbedder()
    vectors = InMemoryVectorStore()
    await vectors.open(dimension=embedder.dimension, model=embedder.model_name)
    indexer = Indexer(vectors=vectors, embedder=embedder)
    question = message(str(uuid.uuid4()), "which trail did Maya recommend?")
    await indexer.store([question])

    [record] = await indexer.records(
        [message(str(uuid.uuid4()), "the ridge one", prev_id=question.id)],
        known={question.id: question.text},
    )

    assert embedder.embedded == [question.text, "the ridge one"]
    assert record.sparse_context is not None
