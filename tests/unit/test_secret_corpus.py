"""The secret corpus: every kind a developer pastes is redacted, and no near-miss is touched."""

from __future__ import annotations

from hybrid_memory.service.redaction import redact
from tests.unit.near_miss_corpus import NEAR_MISSES
from tests.unit.secret_corpus import SECRETS


def test_the_corpus_is_large_and_covers_many_kinds() -> None:
    assert len(SECRETS) >= 150
    assert len(NEAR_MISSES) >= 100
    assert len({kind for kind, _, _ in SECRETS}) >= 100


def test_every_secret_in_the_corpus_is_redacted() -> None:
    missed = [(kind, text) for kind, text, secret in SECRETS if secret in redact(text).text]
    assert missed == []


def test_no_near_miss_is_touched() -> None:
    touched = [(text, redact(text).text) for text in NEAR_MISSES if redact(text).text != text]
    assert touched == []
