"""The secret corpus: every kind a developer pastes is redacted, and no near-miss is touched.

The corpus is drawn from several seeds, so a pattern that holds for one random draw and not
for another (a generated value that happens to hold no digit) fails here.
"""

from __future__ import annotations

import pytest

from hybrid_memory.service.redaction import redact
from tests.unit.near_miss_corpus import NEAR_MISSES
from tests.unit.secret_corpus import SECRETS, SEED, secrets


def test_the_corpus_is_large_and_covers_many_kinds() -> None:
    assert len(SECRETS) >= 200
    assert len(NEAR_MISSES) >= 140
    assert len({kind for kind, _, _ in SECRETS}) >= 150


@pytest.mark.parametrize("seed", [SEED, 1, 2, 3, 4, 5, 6, 7, 8, 9])
def test_every_secret_in_the_corpus_is_redacted(seed: int) -> None:
    missed = [(kind, text) for kind, text, secret in secrets(seed) if secret in redact(text).text]
    assert missed == []


def test_no_near_miss_is_touched() -> None:
    touched = [(text, redact(text).text) for text in NEAR_MISSES if redact(text).text != text]
    assert touched == []
