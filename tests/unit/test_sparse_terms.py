"""A text's BM25 terms are those its document vector holds, however often and in whatever order asked."""

from __future__ import annotations

import pytest

from hybrid_memory.embeddings import sparse
from hybrid_memory.embeddings.sparse import Bm25Encoder

TEXTS = [
    "We chose Postgres for billing because it has transactions.",
    "Which database should billing use?",
    "",
    "word " * 2000,  # longer than the texts whose terms are kept
]


def test_a_texts_terms_are_its_document_vectors_indices_every_time_it_is_asked() -> None:
    encoder = Bm25Encoder()
    for _ in range(3):
        for text in TEXTS:
            assert encoder.terms(text) == encoder.encode_document(text).indices


def test_terms_stay_right_once_the_texts_kept_overflow(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sparse, "TERMS_KEPT", 2)
    encoder = Bm25Encoder()
    texts = [f"turn {n} talks about topic {n * 7}" for n in range(7)]
    for text in texts + texts[::-1]:
        assert encoder.terms(text) == encoder.encode_document(text).indices


def test_a_caller_changing_the_terms_it_got_changes_no_later_answer() -> None:
    encoder = Bm25Encoder()
    first = encoder.terms(TEXTS[0])
    first.clear()
    assert encoder.terms(TEXTS[0]) == encoder.encode_document(TEXTS[0]).indices != []
