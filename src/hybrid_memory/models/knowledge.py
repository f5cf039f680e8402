"""What the knowledge use cases give: ratings, summaries, the graph map, distillation, consolidation."""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum

from pydantic import BaseModel, Field

from hybrid_memory.models.domain import MemoryKind, NoteType, Relation


class Rating(StrEnum):
    USEFUL = "useful"
    WRONG = "wrong"
    OUTDATED = "outdated"


class RateResult(BaseModel):
    id: str
    kind: MemoryKind
    rating: Rating
    importance: float | None = None
    valid_to: datetime | None = Field(
        default=None, description="set: recall leaves it out unless include_invalid=true"
    )


class ThreadSummaryResult(BaseModel):
    id: str = Field(description="the summary memory's id (one per thread)")
    thread_id: str
    text: str
    messages: int = Field(description="messages the summary covers")
    changed: bool = Field(description="false: the stored summary was already up to date")


class NoteBrief(BaseModel):
    id: str
    type: NoteType
    content: str
    degree: int = 0


class Cluster(BaseModel):
    label: str = Field(description="the hub's content")
    terms: list[str] = Field(description="words most frequent in its notes")
    size: int
    hub_id: str
    note_ids: list[str] = Field(description="its notes, best connected first (cut at 10)")


class GraphMap(BaseModel):
    notes: int
    links: int
    hubs: list[NoteBrief]
    clusters: list[Cluster]
    orphans: list[NoteBrief]
    orphan_count: int
    truncated: bool = Field(default=False, description="lists were cut to fit max_tokens")


class DistilledNote(BaseModel):
    key: str = Field(description="its name within one distillation, for links")
    type: NoteType
    content: str
    sources: list[str] = Field(default_factory=list, description="memory ids of the messages it came from")
    tags: list[str] = Field(default_factory=list)


class DistilledLink(BaseModel):
    from_key: str
    to_key: str
    relation: Relation


class Distillation(BaseModel):
    notes: list[DistilledNote] = Field(default_factory=list)
    links: list[DistilledLink] = Field(default_factory=list)


class DistillResult(BaseModel):
    thread_id: str
    created: list[str] = Field(description="ids of new notes")
    existing: list[str] = Field(description="ids of live notes that already said the same")
    links: int
    superseded: list[str] = Field(description="older notes a new one replaced")
    source: str = Field(description="who distilled: sampling, model or none")


class ConsolidationAction(BaseModel):
    action: str = Field(description="merge (a duplicate folded into keep) or supersede (drop is outdated)")
    keep_id: str
    drop_id: str
    keep: str
    drop: str
    similarity: float


class ConsolidationResult(BaseModel):
    applied: bool
    actions: list[ConsolidationAction]
    notes_checked: int
