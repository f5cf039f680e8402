"""Input checks the use cases share: texts, tags, identifiers, retention. Plain functions.

Secrets: a text's secrets are redacted by the caller (its count is reported); a tag's
secrets are redacted here (a tag is text the model chose to store); an id (thread id,
message id) that holds a secret, or that no store can keep (too long, a NUL character),
is replaced by one derived from it: its redacted form and a digest of the whole, so the
same id always gives the same replacement (writes stay idempotent) and two ids never
merge. NUL characters and lone surrogates are refused in texts: no store keeps them
faithfully.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from hybrid_memory.errors import InvalidInputError
from hybrid_memory.service.redaction import redact

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
    return _checked(
        value,
        what,
        limit,
        empty=f"{what} is empty. Pass the text to remember.",
        shorter="Split it into several notes or messages, or summarise it first.",
    )


def query(value: str, limit: int) -> str:
    """A search's words stripped; refused as :func:`text` is, with sentences for a search."""
    return _checked(
        value,
        "query",
        limit,
        empty="query is empty: pass the words to search the memory for.",
        shorter="Search for its key words instead.",
    )


def _checked(value: str, what: str, limit: int, *, empty: str, shorter: str) -> str:
    stripped = storable(value, what).strip()
    if not stripped:
        raise InvalidInputError(empty)
    if len(stripped) > limit:
        raise InvalidInputError(f"{what} has {len(stripped):,} characters; the limit is {limit:,}. {shorter}")
    return stripped


def text_problem(value: str, limit: int) -> str | None:
    """Why a message's text cannot be stored (``unstorable``, ``too long``), or None when it can."""
    if _UNSTORABLE.search(value):
        return "unstorable"
    return "too long" if len(value.strip()) > limit else None


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
    """A caller's id (thread id, ...) stripped, or the one :func:`replaced_identifier` derives from it."""
    return replaced_identifier(value, what)[0]


def replaced_identifier(value: str, what: str) -> tuple[str, bool]:
    """A caller's id stripped, and whether it was replaced; refused only when empty.

    An id that holds a secret, is too long or holds a character no store keeps becomes
    ``<redacted id, cut short>~<digest>``: stable, distinct, and without the secret.
    """
    ident = value.strip()
    if not ident:
        raise InvalidInputError(f"{what} is empty. Pass a non-empty {what}.")
    cleaned = redact(ident)
    if not cleaned.count and len(ident) <= MAX_IDENTIFIER_CHARS and not _UNSTORABLE.search(ident):
        return ident, False
    digest = hashlib.sha256(ident.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    readable = _UNSTORABLE.sub("", cleaned.text)[: MAX_IDENTIFIER_CHARS - len(digest) - 1]
    return f"{readable}~{digest}", True


def expiry(created: datetime, retention_days: float | None) -> datetime | None:
    """When an item created at ``created`` expires; None: kept until the project's own retention."""
    if retention_days is None:
        return None
    if retention_days <= 0:
        raise InvalidInputError(f"retention_days must be positive, got {retention_days:g}.")
    return created + timedelta(days=retention_days)
