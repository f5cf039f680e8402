"""What the embedded (Edge) and the server Qdrant backends share, so it is written once.

Both keep one point per memory:

- id: ``Memory.id``, a UUID (stored and returned in canonical lower-case form);
- a named dense vector ``dense`` (cosine) and a named sparse vector ``bm25`` whose
  IDF the store applies (``Modifier.IDF``), so the keyword channel is real BM25;
- payload: every other ``Memory`` field. Datetimes are ISO 8601 strings in UTC
  (``2024-05-01T12:00:00.250000+00:00``): Qdrant's datetime index parses them for
  range filters, and they read back as the same aware datetime.

:func:`filter_conditions` is the one place that decides what a ``MemoryFilter``
means; each backend only spells its conditions in its library's types.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import ValidationError

from hybrid_memory.backends._qdrant_filter import Alive as Alive
from hybrid_memory.backends._qdrant_filter import Condition as Condition
from hybrid_memory.backends._qdrant_filter import DatetimeRange as DatetimeRange
from hybrid_memory.backends._qdrant_filter import HasId as HasId
from hybrid_memory.backends._qdrant_filter import MatchAny as MatchAny
from hybrid_memory.backends._qdrant_filter import MatchValue as MatchValue
from hybrid_memory.backends._qdrant_filter import filter_conditions as filter_conditions
from hybrid_memory.backends._qdrant_filter import point_id as point_id
from hybrid_memory.backends._qdrant_filter import point_ids as point_ids
from hybrid_memory.backends._qdrant_filter import utc_iso as utc_iso
from hybrid_memory.errors import ConflictError, InvalidInputError
from hybrid_memory.models import (
    Memory,
    MemoryRecord,
    Searches,
    SparseVector,
    VectorHit,
)

DENSE_VECTOR = "dense"
SPARSE_VECTOR = "bm25"
# BM25 over the text with the message before it: a reply ("yes, last May") is found by
# the words of the question it answers.
CONTEXT_SPARSE_VECTOR = "bm25_ctx"
# Boolean Memory fields filtered on, mirrored as "true"/"false" keywords under ``<name>_kw``:
# Edge 0.9.0 never matches a bool payload value (MatchValue(True) counts 0, indexed or not).
FLAG_FIELDS = ("pinned", "private")
KEYWORD_INDEXES = (
    "project",
    "user",
    "thread_id",
    "kind",
    "note_type",
    "tags",
    "message_id",
    "repeat_key",
    *(f"{name}_kw" for name in FLAG_FIELDS),
)
# ``expires_at`` is in every read's liveness filter: unindexed, Edge checked it point by
# point and a 10k-store recall spent 10 ms there (bench/recall_stages.py).
DATETIME_INDEXES = ("created_at", "expires_at")
THREAD_FIELD = "thread_id"
MAX_SCOPES = 100_000
"""Most projects (and users per project) ``scopes()`` lists: far above any real store."""

_DATETIME_FIELDS = ("created_at", "valid_from", "valid_to", "expires_at", "last_accessed_at")
# A memory never changes owner: moving it to another scope through set_payload would
# be a cross-project write, and the id is the point id, not a payload field.
_FIXED_FIELDS = frozenset({"id", "project", "user"})


# --- which model filled a store -------------------------------------------------------------


@dataclass(frozen=True)
class StoreIdentity:
    """The embedding model and dimension whose vectors fill a store."""

    model: str
    dimension: int

    def to_json(self) -> dict[str, Any]:
        return {"model": self.model, "dimension": self.dimension}

    @classmethod
    def from_json(cls, data: object) -> StoreIdentity | None:
        """The identity recorded in ``data``; None when ``data`` records none."""
        if not isinstance(data, Mapping):
            return None
        model, dimension = data.get("model"), data.get("dimension")
        if isinstance(model, str) and isinstance(dimension, int):
            return cls(model=model, dimension=dimension)
        return None


def check_identity(stored: StoreIdentity, wanted: StoreIdentity, *, store: str, elsewhere: str) -> None:
    """Raise ``ConflictError`` unless ``wanted`` is what filled the store.

    ``store`` names the store ("at /path", "in Qdrant collection 'c' at url");
    ``elsewhere`` says how to start a fresh one instead.
    """
    if stored == wanted:
        return
    raise ConflictError(
        f"The memory store {store} was filled by embedding model '{stored.model}' "
        f"(dimension {stored.dimension}), but '{wanted.model}' (dimension {wanted.dimension}) is "
        f"configured; vectors of different models cannot be searched together. Configure "
        f"'{stored.model}' again, or re-embed the memories: `hybrid-memory export` with the old "
        f"model, then `hybrid-memory import` with the new one into a fresh store; or {elsewhere}."
    )


# --- ids, limits, vectors ------------------------------------------------------------------


def scroll_offset(offset: str | None) -> str | None:
    """Check an offset handed back by ``scroll``."""
    if offset is None:
        return None
    pid = point_id(offset)
    if pid is None:
        raise InvalidInputError(
            f"Offset {offset!r} is not one that scroll returned; pass None for the first page."
        )
    return pid


def check_limit(limit: int) -> None:
    if limit < 1:
        raise InvalidInputError(f"limit must be at least 1, got {limit}.")


def check_dense(vector: Sequence[float], dimension: int) -> list[float]:
    """``vector`` as floats, or ``InvalidInputError`` when it cannot go into this store."""
    if len(vector) != dimension:
        raise InvalidInputError(
            f"The dense vector has {len(vector)} dimensions; this store holds {dimension}. "
            "Embed with the model the store was opened for."
        )
    values = list(map(float, vector))
    if not all(map(math.isfinite, values)):
        raise InvalidInputError("The dense vector contains NaN or infinite values.")
    return values


def check_sparse(vector: SparseVector) -> None:
    # Edge 0.9.0 panics (a Rust index-out-of-bounds) on mismatched lists instead of
    # raising, so they must never reach it.
    if len(vector.indices) != len(vector.values):
        raise InvalidInputError(
            f"The sparse vector has {len(vector.indices)} indices but {len(vector.values)} values."
        )
    if len(set(vector.indices)) != len(vector.indices) or any(i < 0 for i in vector.indices):
        raise InvalidInputError("The sparse vector's indices must be distinct and non-negative.")


def check_record(record: MemoryRecord, dimension: int) -> tuple[str, list[float]]:
    """The point id and dense vector of a record that is fit to store."""
    pid = point_id(record.memory.id)
    if pid is None:
        raise InvalidInputError(f"Memory id {record.memory.id!r} is not a UUID; memory ids must be UUIDs.")
    dense = check_dense(record.dense, dimension)
    check_sparse(record.sparse)
    return pid, dense


def point_vectors(
    record: MemoryRecord, dimension: int, sparse: Callable[[list[int], list[float]], Any]
) -> tuple[str, dict[str, Any]]:
    """A record's point id and named vectors; ``sparse`` builds the store's sparse vector type.

    A memory without a context vector searches its own text under the context name too.
    """
    pid, dense = check_record(record, dimension)
    context = record.sparse_context or record.sparse
    return pid, {
        DENSE_VECTOR: dense,
        SPARSE_VECTOR: sparse(list(record.sparse.indices), list(record.sparse.values)),
        CONTEXT_SPARSE_VECTOR: sparse(list(context.indices), list(context.values)),
    }


# --- payload <-> Memory ----------------------------------------------------------------------


def memory_to_payload(memory: Memory) -> dict[str, Any]:
    payload = memory.model_dump(mode="json", exclude={"id"})
    # pydantic keeps a non-UTC offset as given; range filters and readers want one zone.
    for name in _DATETIME_FIELDS:
        value = getattr(memory, name)
        payload[name] = None if value is None else utc_iso(value)
    for name in FLAG_FIELDS:
        payload[f"{name}_kw"] = "true" if getattr(memory, name) else "false"
    return payload


def payload_to_memory(pid: object, payload: Mapping[str, Any] | None) -> Memory:
    """The Memory stored as point ``pid`` (Edge returns a UUID, the server a string)."""
    return Memory.model_validate({**(payload or {}), "id": str(pid)})


class _Scored(Protocol):
    @property
    def id(self) -> Any: ...
    @property
    def payload(self) -> Any: ...
    @property
    def score(self) -> float: ...


class _FacetHit(Protocol):
    @property
    def value(self) -> str | int | bool: ...
    @property
    def count(self) -> int: ...


def hits(points: Sequence[_Scored]) -> list[VectorHit]:
    """Scored points of either library as hits, in the order the store ranked them."""
    return [VectorHit(memory=payload_to_memory(p.id, p.payload), score=p.score) for p in points]


def hits_by_search(names: Sequence[str], batches: Sequence[Sequence[_Scored]]) -> dict[str, list[VectorHit]]:
    """The scored points of each named search as hits; a point found by several is read once."""
    memories: dict[str, Memory] = {}
    out: dict[str, list[VectorHit]] = {}
    for name, points in zip(names, batches, strict=True):
        row = []
        for p in points:
            key = str(p.id)
            memory = memories.get(key)
            if memory is None:
                memory = memories[key] = payload_to_memory(p.id, p.payload)
            row.append(VectorHit(memory=memory, score=p.score))
        out[name] = row
    return out


class _Record(Protocol):
    @property
    def id(self) -> Any: ...
    @property
    def payload(self) -> Any: ...


def hits_by_id(
    names: Sequence[str], ranked: Sequence[Sequence[tuple[str, float]]], records: Sequence[_Record]
) -> dict[str, list[VectorHit]]:
    """Each named search's (id, score) ranking as hits, with the memories read once in ``records``.

    A hit whose record is missing (deleted between the search and the read) is left out.
    """
    return hits_from(names, ranked, memories_by_id(records))


def memories_by_id(records: Iterable[_Record]) -> dict[str, Memory]:
    """Each record's Memory by its point id (as a string, the form ``hits_from`` looks up)."""
    return {str(r.id): payload_to_memory(r.id, r.payload) for r in records}


def hits_from(
    names: Sequence[str], ranked: Sequence[Sequence[tuple[str, float]]], memories: Mapping[str, Memory]
) -> dict[str, list[VectorHit]]:
    """Each named search's (id, score) ranking as hits over ``memories`` by id; ids not there are left out."""
    return {
        name: [VectorHit(memory=memories[pid], score=score) for pid, score in found if pid in memories]
        for name, found in zip(names, ranked, strict=True)
    }


@dataclass(frozen=True)
class PlannedSearch:
    """One search of a ``search_many`` call: its name, the named vector it uses, the query vector."""

    name: str
    using: str
    vector: list[float] | SparseVector


def plan_searches(
    dimension: int, limit: int, searches: Searches
) -> tuple[list[PlannedSearch], dict[str, list[VectorHit]]]:
    """The searches to send, checked, and the results known without asking (an empty sparse query)."""
    check_limit(limit)
    planned: list[PlannedSearch] = []
    empty: dict[str, list[VectorHit]] = {}
    if searches.dense is not None:
        planned.append(PlannedSearch("dense", DENSE_VECTOR, check_dense(searches.dense, dimension)))
    sparse_searches = (
        ("keyword", SPARSE_VECTOR, searches.keyword),
        ("context", CONTEXT_SPARSE_VECTOR, searches.context),
    )
    for name, using, sparse in sparse_searches:
        if sparse is None:
            continue
        check_sparse(sparse)
        if sparse.indices:
            planned.append(PlannedSearch(name, using, sparse))
        else:  # a query of stop words only: no keyword can match
            empty[name] = []
    return planned, empty


def facet_counts(facet_hits: Sequence[_FacetHit]) -> dict[str, int]:
    """Facet hits as ``{value: count}``, largest first, ties by value (both stores agree)."""
    ordered = sorted(facet_hits, key=lambda h: (-h.count, str(h.value)))
    return {str(h.value): h.count for h in ordered}


def payload_update(current: Memory, fields: Mapping[str, object]) -> dict[str, Any]:
    """The payload keys to write so that ``current`` takes the values in ``fields``.

    Values are validated as the Memory fields they set, so the stored payload always
    reads back as a valid Memory.
    """
    unknown = sorted(set(fields) - set(Memory.model_fields))
    if unknown:
        raise InvalidInputError(f"Unknown memory fields: {', '.join(unknown)}.")
    fixed = sorted(set(fields) & _FIXED_FIELDS)
    if fixed:
        raise InvalidInputError(
            f"Memory fields {', '.join(fixed)} cannot be changed; store a new memory instead."
        )
    try:
        updated = Memory.model_validate({**current.model_dump(), **fields})
    except ValidationError as exc:
        raise InvalidInputError(f"Invalid memory field value: {exc}") from exc
    payload = memory_to_payload(updated)
    names = [*fields, *(f"{name}_kw" for name in FLAG_FIELDS if name in fields)]
    return {name: payload[name] for name in names}


class _WithVector(Protocol):
    """A point read back with its vectors, as Edge and qdrant-client both return it."""

    @property
    def id(self) -> Any: ...

    @property
    def vector(self) -> Any: ...


def dense_by_id(records: Iterable[_WithVector]) -> dict[str, list[float]]:
    """Each point's dense vector by its id; a point without one is left out."""
    found: dict[str, list[float]] = {}
    for record in records:
        dense = record.vector.get(DENSE_VECTOR) if isinstance(record.vector, dict) else None
        if isinstance(dense, list):
            found[str(record.id)] = [float(v) for v in dense if isinstance(v, (int, float))]
    return found
