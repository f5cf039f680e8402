"""Input checks the use cases share: texts, tags, identifiers, retention. Plain functions."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from hybrid_memory.errors import InvalidInputError

MAX_TAGS = 32
MAX_TAG_CHARS = 64
MAX_IDENTIFIER_CHARS = 256


def text(value: str, what: str, limit: int) -> str:
    """``value`` stripped; refused when empty or longer than ``limit`` characters."""
    stripped = value.strip()
    if not stripped:
        raise InvalidInputError(f"{what} is empty. Pass the text to remember.")
    if len(stripped) > limit:
        raise InvalidInputError(
            f"{what} has {len(stripped):,} characters; the limit is {limit:,}. "
            "Split it into several notes or messages, or summarise it first."
        )
    return stripped


def tags(values: Sequence[str]) -> list[str]:
    """Distinct, stripped, sorted tags; refused when too many or too long."""
    clean = sorted({t.strip() for t in values if t.strip()})
    if len(clean) > MAX_TAGS:
        raise InvalidInputError(f"{len(clean)} tags given; at most {MAX_TAGS} are allowed.")
    for tag in clean:
        if len(tag) > MAX_TAG_CHARS:
            raise InvalidInputError(f"Tag '{tag[:20]}…' is longer than {MAX_TAG_CHARS} characters.")
    return clean


def identifier(value: str, what: str) -> str:
    """A caller's id (thread id, ...) stripped; refused when empty or too long."""
    ident = value.strip()
    if not ident:
        raise InvalidInputError(f"{what} is empty. Pass a non-empty {what}.")
    if len(ident) > MAX_IDENTIFIER_CHARS:
        raise InvalidInputError(f"{what} is longer than {MAX_IDENTIFIER_CHARS} characters.")
    return ident


def expiry(created: datetime, retention_days: float | None) -> datetime | None:
    """When an item created at ``created`` expires; None: kept until the project's own retention."""
    if retention_days is None:
        return None
    if retention_days <= 0:
        raise InvalidInputError(f"retention_days must be positive, got {retention_days:g}.")
    return created + timedelta(days=retention_days)
