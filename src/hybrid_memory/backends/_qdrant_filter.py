"""What a ``MemoryFilter`` means, as conditions both Qdrant stores (and the in-memory one) translate."""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime

from hybrid_memory.models import (
    MemoryFilter,
)


def utc_iso(value: datetime) -> str:
    """ISO 8601 in UTC; a naive datetime is taken to be UTC already."""
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat()


_CANONICAL = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
"""A UUID already in canonical form (what every stored id is): its own point id, parsed no further."""


def point_id(memory_id: str) -> str | None:
    """The canonical form of a UUID id; None for anything else (no point can have it)."""
    if type(memory_id) is str and _CANONICAL.fullmatch(memory_id):
        return memory_id
    try:
        return str(uuid.UUID(memory_id))
    except (ValueError, AttributeError, TypeError):
        return None


def point_ids(memory_ids: Sequence[str]) -> list[str]:
    """The distinct ids among ``memory_ids`` that can name a point, in canonical form."""
    return list(dict.fromkeys(pid for pid in map(point_id, memory_ids) if pid is not None))


# --- MemoryFilter -> conditions -----------------------------------------------------------------


@dataclass(frozen=True)
class MatchValue:
    key: str
    value: str


@dataclass(frozen=True)
class MatchAny:
    """The field (or, for a list field, one of its values) is one of ``values``; none matches ``()``."""

    key: str
    values: tuple[str, ...]


@dataclass(frozen=True)
class DatetimeRange:
    key: str
    gte: str | None
    lt: str | None


@dataclass(frozen=True)
class HasId:
    """The point id is one of ``ids``; none matches ``()``."""

    ids: tuple[str, ...]


@dataclass(frozen=True)
class Alive:
    """Not expired (:class:`~hybrid_memory.models.Liveness`): pinned, or else no ``expires_at``
    at or before ``now`` and, with ``retained_from``, created at or after it."""

    now: str
    retained_from: str | None


Condition = MatchValue | MatchAny | DatetimeRange | HasId | Alive


def filter_conditions(flt: MemoryFilter) -> list[Condition]:
    """The conditions a memory must all meet to pass ``flt``.

    Scope (project AND user) always. ``None`` means no condition; an empty list
    matches nothing (an explicit "none of these" never widens into "all").
    ``tags`` is any-of. ``created_after`` is inclusive and ``created_before``
    exclusive, so consecutive windows neither overlap nor leave a gap.
    Ids that are not UUIDs cannot exist and are dropped.
    """
    conditions: list[Condition] = [
        MatchValue("project", flt.scope.project),
        MatchValue("user", flt.scope.user),
    ]
    if flt.thread_id is not None:
        conditions.append(MatchValue("thread_id", flt.thread_id))
    if flt.kinds is not None:
        conditions.append(MatchAny("kind", tuple(k.value for k in flt.kinds)))
    if flt.note_types is not None:
        conditions.append(MatchAny("note_type", tuple(t.value for t in flt.note_types)))
    if flt.tags is not None:
        conditions.append(MatchAny("tags", tuple(flt.tags)))
    if flt.repeat_keys is not None:
        conditions.append(MatchAny("repeat_key", tuple(flt.repeat_keys)))
    if flt.created_after is not None or flt.created_before is not None:
        conditions.append(
            DatetimeRange(
                "created_at",
                gte=None if flt.created_after is None else utc_iso(flt.created_after),
                lt=None if flt.created_before is None else utc_iso(flt.created_before),
            )
        )
    if flt.ids is not None:
        conditions.append(HasId(tuple(point_ids(flt.ids))))
    if flt.pinned is not None:
        conditions.append(MatchValue("pinned_kw", "true" if flt.pinned else "false"))
    if flt.private is not None:
        conditions.append(MatchValue("private_kw", "true" if flt.private else "false"))
    if flt.expires_before is not None:
        conditions.append(DatetimeRange("expires_at", gte=None, lt=utc_iso(flt.expires_before)))
    if flt.alive is not None:
        since = flt.alive.retained_from
        conditions.append(Alive(utc_iso(flt.alive.now), None if since is None else utc_iso(since)))
    return conditions
