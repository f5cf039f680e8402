"""What the housekeeping use cases return: pins, the context block, limits, stats, cleanup, tasks."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field

from hybrid_memory.models.domain import MemoryKind


class PinResult(BaseModel):
    id: str
    kind: MemoryKind
    pinned: bool = Field(description="true: in core memory (always in get_memory_context, never evicted)")
    changed: bool = Field(description="false when it already was in that state")
    text: str


class ContextItem(BaseModel):
    id: str = Field(description="cite it as [memory:<id>]")
    kind: MemoryKind
    text: str
    tokens: int = Field(description="tokens of its line in `text`")
    score: float | None = Field(default=None, description="recall score, for recalled items")
    thread_id: str | None = None
    role: str | None = Field(default=None, description="a message's role, a note's type")
    private: bool = False


class MemoryContext(BaseModel):
    core: list[ContextItem] = Field(description="pinned memories")
    notes: list[ContextItem] = Field(
        default_factory=list, description="the project's current decisions, preferences and facts"
    )
    working: list[ContextItem] = Field(description="the current thread's latest messages")
    recalled: list[ContextItem] = Field(description="memories relevant to the query")
    text: str = Field(description="one block to put in a prompt; each line cites [memory:<id>]")
    tokens: int = Field(description="tokens of `text`, never more than max_tokens")
    max_tokens: int
    omitted: int = Field(description="candidates left out because the budget was full")


class LimitsInfo(BaseModel):
    max_items: int | None
    max_tokens: int | None
    ttl_days: float | None
    eviction_policy: str
    summarize_on_evict: bool
    retention_days: float | None


class PreviewItem(BaseModel):
    id: str
    kind: MemoryKind
    reason: str = Field(description="expired (retention), ttl, max_items or max_tokens")
    text: str = Field(description="the first 200 characters")
    tokens: int
    created_at: datetime


class ForgetPreview(BaseModel):
    items: list[PreviewItem] = Field(description="what cleanup_memory would remove now, one page")
    total: int = Field(description="how many it would remove in all")
    summarized: bool = Field(description="whether the evicted ones would be replaced by one summary")
    next_cursor: str | None = Field(description="pass as cursor for the next page; null at the end")
    limits: LimitsInfo


class CleanupResult(BaseModel):
    deleted: int = Field(description="expired memories and notes deleted (retention)")
    evicted: int = Field(description="memories evicted to fit the project's limits")
    summary_id: str | None = Field(description="the summary memory that replaced the evicted ones")
    ids: list[str] = Field(description="removed ids (at most 500 listed)")


class KindStats(BaseModel):
    kind: MemoryKind
    count: int
    tokens: int


class MemoryStats(BaseModel):
    project: str
    items: int
    tokens: int
    by_kind: list[KindStats]
    pinned: int
    private: int
    notes: int = Field(description="notes in the knowledge graph")
    evictions: int = Field(description="memories evicted since the server started")
    summaries_written: int = Field(description="eviction summaries written since the server started")
    deleted_expired: int = Field(description="expired memories deleted since the server started")
    recalls: int = Field(description="recall_memory / get_memory_context calls since the server started")
    recall_hit_rate: float | None = Field(description="share of those that returned anything")
    limits: LimitsInfo


class TaskResult(BaseModel):
    id: str = Field(description="the task memory's id")
    text: str
    success: bool
    redacted: int = Field(default=0, description="secrets replaced by [REDACTED:...] before storing")
    evicted: int = 0
