"""What is stored: scopes, memories, notes, links, filters, and the records the stores keep."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


def utcnow() -> datetime:
    return datetime.now(UTC)


def _as_utc(value: datetime) -> datetime:
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)


class MemoryKind(StrEnum):
    MESSAGE = "message"
    NOTE = "note"
    SUMMARY = "summary"
    TASK = "task"
    """A task outcome (record_task): what was tried and whether it worked."""


class NoteType(StrEnum):
    FACT = "fact"
    PREFERENCE = "preference"
    DECISION = "decision"
    INSIGHT = "insight"
    QUESTION = "question"
    CONCEPT = "concept"


class Relation(StrEnum):
    """Link types. Closed: the Neo4j backend turns them into relationship types."""

    EXTENDS = "extends"
    CONTRADICTS = "contradicts"
    SUPPORTS = "supports"
    EXAMPLE_OF = "example_of"
    PART_OF = "part_of"
    RELATES_TO = "relates_to"
    ANSWERS = "answers"
    CAUSED_BY = "caused_by"
    TEMPORAL = "temporal"
    SUPERSEDES = "supersedes"


class Direction(StrEnum):
    OUT = "out"
    IN = "in"
    BOTH = "both"


class Scope(BaseModel):
    """Who a stored item belongs to. Every backend query is filtered by it."""

    model_config = ConfigDict(frozen=True)

    project: str = "default"
    user: str = "default"


class CodeState(BaseModel):
    """The files a memory's turn edited, as they were when captured (:mod:`hybrid_memory.codestate`)."""

    files: dict[str, str | None] = Field(
        description="path relative to the work tree -> git blob id of its content then (null: unreadable)"
    )
    commit: str | None = Field(default=None, description="the commit checked out")
    branch: str | None = Field(default=None, description="the branch checked out; null when detached")


class ToolUse(BaseModel):
    """A file a captured turn edited or read, or a command it ran and how that ended
    (:mod:`hybrid_memory.text.activity` shows it as a line of the message's text)."""

    verb: Literal["edited", "not edited", "read", "tests", "ran"]
    path: str | None = Field(default=None, description="the file, relative to the work tree when inside it")
    command: str | None = Field(default=None, description="the command line, cut at 120 characters")
    outcome: Literal["passed", "failed", "ok"] | None = None
    error: str | None = Field(default=None, description="a failed command's error line")


class Memory(BaseModel):
    """One retrievable unit in the vector store: a message chunk, a note's text, a summary.

    ``id`` is a UUID string; datetimes are aware UTC (naive ones are taken as UTC).
    """

    id: str
    kind: MemoryKind
    text: str
    project: str
    user: str = "default"
    thread_id: str | None = None
    message_id: str | None = None
    role: str | None = None
    chunk_index: int = 0
    chunk_count: int = 1
    note_type: NoteType | None = None
    tags: list[str] = Field(default_factory=list)
    importance: float | None = None
    created_at: datetime = Field(default_factory=utcnow)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    source: str | None = None
    tokens: int = 0
    pinned: bool = False
    """Core memory: always in get_memory_context, never evicted."""
    private: bool = False
    """Kept out of exports."""
    expires_at: datetime | None = None
    """Retention: the cleanup pass deletes it from then on."""
    last_accessed_at: datetime | None = None
    """Last returned by recall or get_memory_context (the lru eviction policy)."""
    replaces: list[str] = Field(default_factory=list)
    """For a summary: the ids of the memories it replaced."""
    replaced_count: int = 0
    """For a summary: how many memories it replaced, its own predecessors' included."""
    prev_id: str | None = None
    """The memory just before this one in its thread (as remembered in one call), for recall's adjacency."""
    next_id: str | None = None
    """The memory just after this one in its thread (as remembered in one call)."""
    code: CodeState | None = None
    """For a message captured from a coding session: the files its turn edited, as they were then."""
    activity: list[ToolUse] = Field(default_factory=list)
    """For a message captured from a coding session: the files it edited and read, the commands it ran."""
    repeat_key: str | None = None
    """For a question or reply captured from a session: a digest of its normalized words, by which capture
    knows the same words said again in another session."""
    transcript_at: int | None = None
    """For a message captured from a session's transcript: the byte offset of the line it begins on."""

    @field_validator("created_at", "valid_from", "valid_to", "expires_at", "last_accessed_at")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _as_utc(value)


class SparseVector(BaseModel):
    """A keyword (BM25) vector: parallel index and weight lists."""

    indices: list[int]
    values: list[float]


class MemoryRecord(BaseModel):
    """What the vector store keeps for one memory."""

    memory: Memory
    dense: list[float]
    sparse: SparseVector
    sparse_context: SparseVector | None = None
    """BM25 of the text with the message before it; None: the same as ``sparse``."""


class Liveness(BaseModel):
    """Which memories count as not expired: the one precedence between pins and retention.

    A pinned memory never expires. An unpinned one has expired once its own ``expires_at``
    (from a per-item ``retention_days``) is at or before ``now``, or when it was created
    before ``retained_from`` (the project's ``retention_days``).
    """

    now: datetime
    retained_from: datetime | None = None

    @field_validator("now", "retained_from")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _as_utc(value)

    def expired(self, memory: Memory) -> bool:
        if memory.pinned:
            return False
        if memory.expires_at is not None and memory.expires_at <= self.now:
            return True
        return self.retained_from is not None and memory.created_at < self.retained_from


class StoreFilter(BaseModel):
    """What a query of either store filters by. ``scope`` is mandatory: no unscoped query exists."""

    scope: Scope
    thread_id: str | None = None
    tags: list[str] | None = None
    """Match items carrying any of these tags; [] matches nothing (so for every list field)."""


class MemoryFilter(StoreFilter):
    """A vector-store query filter."""

    kinds: list[MemoryKind] | None = None
    """None: any kind."""
    note_types: list[NoteType] | None = None
    created_after: datetime | None = None
    """Inclusive."""
    created_before: datetime | None = None
    """Exclusive."""
    ids: list[str] | None = None
    """Ids that are not UUIDs match nothing."""
    pinned: bool | None = None
    private: bool | None = None
    repeat_keys: list[str] | None = None
    """Match memories whose ``repeat_key`` is one of these."""
    expires_before: datetime | None = None
    """Exclusive; memories without ``expires_at`` never match."""
    alive: Liveness | None = None
    """Only memories not expired by then; None: expired ones match too (what cleanup reads)."""


class VectorHit(BaseModel):
    memory: Memory
    score: float


class Note(BaseModel):
    """A node of the knowledge graph."""

    id: str
    project: str
    user: str = "default"
    content: str
    type: NoteType
    tags: list[str] = Field(default_factory=list)
    importance: float | None = None
    thread_id: str | None = None
    created: datetime = Field(default_factory=utcnow)
    modified: datetime = Field(default_factory=utcnow)
    valid_from: datetime | None = None
    valid_to: datetime | None = None
    superseded_by: str | None = None
    """The note that superseded or contradicted this one; read from its links, never stored."""

    @field_validator("created", "modified", "valid_from", "valid_to")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _as_utc(value)

    @classmethod
    def new(
        cls,
        scope: Scope,
        note_id: str,
        content: str,
        type: NoteType,
        at: datetime,
        *,
        tags: Sequence[str] = (),
        importance: float | None = None,
        thread_id: str | None = None,
    ) -> Note:
        """A note of ``scope`` written at ``at``: created, modified and valid from then."""
        return cls(
            id=note_id,
            project=scope.project,
            user=scope.user,
            content=content,
            type=type,
            created=at,
            modified=at,
            valid_from=at,
            tags=list(tags),
            importance=importance,
            thread_id=thread_id,
        )


class Link(BaseModel):
    """A typed, directed edge between two notes of one scope. Unique per (from, to, relation)."""

    from_id: str
    to_id: str
    relation: Relation
    strength: float = 1.0
    project: str
    user: str = "default"
    created: datetime = Field(default_factory=utcnow)
    valid_from: datetime | None = None
    valid_to: datetime | None = None

    @field_validator("created", "valid_from", "valid_to")
    @classmethod
    def _utc(cls, value: datetime | None) -> datetime | None:
        return None if value is None else _as_utc(value)

    @classmethod
    def new(
        cls, scope: Scope, from_id: str, to_id: str, relation: Relation, at: datetime, strength: float = 1.0
    ) -> Link:
        """A link of ``scope`` made at ``at``: created and valid from then."""
        return cls(
            from_id=from_id,
            to_id=to_id,
            relation=relation,
            strength=strength,
            project=scope.project,
            user=scope.user,
            created=at,
            valid_from=at,
        )


class NoteFilter(StoreFilter):
    """A graph-store query filter."""

    types: list[NoteType] | None = None
    valid_at: datetime | None = None
    """Only notes valid at this instant (``valid_from <= t < valid_to``); None: no validity filter."""


class NoteHit(BaseModel):
    note: Note
    score: float


class Walk(BaseModel):
    """A walk through the graph from one note: how far, along which links, which way, valid when."""

    model_config = ConfigDict(frozen=True)

    note_id: str
    depth: int = 1
    relations: list[Relation] | None = None
    """Only these link types are walked; None: all; []: none (an empty walk)."""
    direction: Direction = Direction.BOTH
    valid_at: datetime | None = None
    """Only links and notes valid at this instant are walked and returned."""
    limit: int = 100

    @property
    def empty(self) -> bool:
        """Whether the walk can reach nothing whatever the graph holds."""
        return self.depth < 1 or self.limit < 1 or (self.relations is not None and not self.relations)


class Searches(BaseModel):
    """The vector searches of one recall, sent to the store as one round: each vector given, one search.

    ``dense`` by cosine; ``keyword`` BM25 over a memory's own text; ``context`` BM25 over its text
    with the message before it.
    """

    model_config = ConfigDict(frozen=True)

    dense: list[float] | None = None
    keyword: SparseVector | None = None
    context: SparseVector | None = None


class Neighbourhood(BaseModel):
    notes: list[Note]
    links: list[Link]
