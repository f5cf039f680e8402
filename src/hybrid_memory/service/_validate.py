"""Input checks the use cases share: texts, tags, identifiers, retention. Plain functions.

Secrets: a text's secrets are redacted by the caller (its count is reported); a tag's
secrets are redacted here (a tag is text the model chose to store); an id (thread id,
message id) that holds a secret is refused, since an id must stay as given to stay
stable: redacting it would merge different ids and break idempotent writes.
NUL characters and lone surrogates are refused everywhere: no store keeps them faithfully.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from hybrid_memory.errors import InvalidInputError
from hybrid_memory.service.redaction import contains_secret, redact

MAX_TAGS = 32
MAX_TAG_CHARS = 64
MAX_IDENTIFIER_CHARS = 256
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def storable(value: str, what: str) -> str:
    """``value`` unchanged; refused when it holds a NUL character or a lone surrogate."""
    found = _UNSTORABLE.search(value)
    if found is not None:
        char = "a NUL character" if found.group() == "\x00" else "a lone surrogate"
        raise InvalidInputError(
            f"{what} contains {char} at position {found.start()}; remove it and call again."
        )
    return value


def text(value: str, what: str, limit: int) -> str:
    """``value`` stripped; refused when empty, longer than ``limit`` characters, or unstorable."""
    stripped = storable(value, what).strip()
    if not stripped:
        raise InvalidInputError(f"{what} is empty. Pass the text to remember.")
    if len(stripped) > limit:
        raise InvalidInputError(
            f"{what} has {len(stripped):,} characters; the limit is {limit:,}. "
            "Split it into several notes or messages, or summarise it first."
        )
    return stripped


def tags(values: Sequence[str]) -> list[str]:
    """Distinct, stripped, sorted tags, secrets redacted; refused when too many, too long or unstorable."""
    clean = sorted({redact(storable(t, "A tag")).text.strip() for t in values if t.strip()})
    if len(clean) > MAX_TAGS:
        raise InvalidInputError(f"{len(clean)} tags given; at most {MAX_TAGS} are allowed.")
    for tag in clean:
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidInputError(f"Tag '{tag[:20]}…' is longer than {MAX_TAG_CHARS} characters.")
    return clean


def identifier(value: str, what: str) -> str:
    """A caller's id (thread id, ...) stripped; refused when empty, too long, unstorable or a secret."""
    ident = storable(value, what).strip()
    if not ident:
        raise InvalidInputError(f"{what} is empty. Pass a non-empty {what}.")
    if len(ident) > MAX_IDENTIFIER_CHARS:
        raise InvalidInputError(f"{what} is longer than {MAX_IDENTIFIER_CHARS} characters.")
    if contains_secret(ident):
        raise InvalidInputError(
            f"{what} looks like it contains a secret (a key, token or password); "
            "ids are stored and indexed as given, so pass an id without credentials."
        )
    return ident


def expiry(created: datetime, retention_days: float | None) -> datetime | None:
    """When an item created at ``created`` expires; None: kept until the project's own retention."""
    if retention_days is None:
        return None
    if retention_days <= 0:
        raise InvalidInputError(f"retention_days must be positive, got {retention_days:g}.")
    return created + timedelta(days=retention_days)
