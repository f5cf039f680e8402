"""The secret corpus: at least 95% of the fake secrets are redacted, at most 5% of near-misses touched."""

from __future__ import annotations

from hybrid_memory.service.redaction import redact
from tests.unit.secret_corpus import NEAR_MISSES, SECRETS


def test_the_corpus_is_large_and_covers_many_kinds() -> None:
    assert len(SECRETS) >= 40
    assert len(NEAR_MISSES) >= 40
    assert len({kind for kind, _, _ in SECRETS}) >= 25


def test_at_least_95_percent_of_secrets_are_redacted() -> None:
    missed = [kind for kind, text, secret in SECRETS if secret in redact(text).text]
    assert (len(SECRETS) - len(missed)) / len(SECRETS) >= 0.95, missed


def test_at_most_5_percent_of_near_misses_are_touched() -> None:
    touched = [text for text in NEAR_MISSES if redact(text).text != text]
    assert len(touched) / len(NEAR_MISSES) <= 0.05, touched
