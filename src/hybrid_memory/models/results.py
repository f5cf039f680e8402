"""What the use cases take and give: the tools return these as structured output."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from hybrid_memory.models.domain import MemoryKind, Note, NoteType


class ContentBlock(BaseModel):
    """One part of a message, Anthropic or OpenAI style; only ``text`` parts are remembered."""

    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None


class MessageIn(BaseModel):
    """A message as agents send it: plain, OpenAI chat (``tool_calls``, ``content: null``) or content blocks.

    Other fields (``tool_calls``, ``tool_call_id``, ``name``, ...) are accepted; tool calls are counted
    as skipped blocks.
    """

    model_config = ConfigDict(extra="allow")

    role: str
    content: str | list[ContentBlock] | None = None
    id: str | None = None
    created_at: datetime | None = None

    @property
    def tool_calls(self) -> int:
        """How many OpenAI-style ``tool_calls`` (or a legacy ``function_call``) the message carries."""
        extra = self.model_extra or {}
        calls = extra.get("tool_calls")
        return (len(calls) if isinstance(calls, list) else 0) + (1 if extra.get("function_call") else 0)


class RememberResult(BaseModel):
    thread_id: str
    stored: int = Field(description="messages stored or updated now")
    unchanged: int = Field(description="messages already remembered with the same text")
    skipped_messages: int = Field(
        default=0, description="messages left out whole: other roles, no text (only tool calls, images, ...)"
    )
    skipped_blocks: int = Field(
        default=0, description="non-text parts (tool calls, thinking, images) left out of remembered messages"
    )
    chunks: int = Field(description="memories written (long messages are split into overlapping chunks)")
    memory_ids: list[str] = Field(
        description="ids of the memories of the given messages, stored or unchanged (at most 500 listed)"
    )
    more_ids: int = Field(default=0, description="memory ids not listed")
    skipped_reasons: dict[str, int] = Field(
        default_factory=dict, description="what was left out and how often; sums to both counts"
    )
    redacted: int = Field(default=0, description="secrets replaced by [REDACTED:...] before storing")
    ids_replaced: int = Field(
        default=0,
        description="thread or message ids that held a secret (or could not be stored as given), "
        "stored under an id derived from them; the same id always gets the same replacement",
    )
    evicted: int = Field(default=0, description="older memories evicted to stay within the project's limits")


class AdjacentTurn(BaseModel):
    """The turn just before or after a message hit, shortened: the conversation around the hit."""

    id: str = Field(description="memory id of the turn")
    message_id: str | None = None
    role: str | None = None
    text: str = Field(description="the turn's text, cut to a few hundred characters")


class RecallHit(BaseModel):
    id: str = Field(
        description="memory id; for a note, the note id (usable with create_link / get_linked_notes)"
    )
    kind: MemoryKind
    text: str
    score: float = Field(description="final score, 0..1, higher is better")
    thread_id: str | None = None
    message_id: str | None = None
    role: str | None = None
    note_type: NoteType | None = None
    tags: list[str] = Field(default_factory=list)
    importance: float | None = None
    created_at: datetime
    valid_to: datetime | None = None
    superseded_by: str | None = Field(
        default=None,
        description="for a note no longer valid: the id of the note that superseded or contradicted it",
    )
    chunk_index: int = 0
    channels: list[str] = Field(description="which channels found it: dense, keyword, graph, neighbour")
    ranks: dict[str, int] = Field(description="its 1-based rank in each channel")
    relevance: float = Field(description="fused relevance 0..1 before recency and importance")
    match: float = Field(
        default=0.0,
        description="how well its own text matched, 0..1 on the same scale in every query: the mean of the "
        "share of the query's words it holds and its closeness in meaning (what min_score compares)",
    )
    weak: bool = Field(
        default=False,
        description="match below the server's level for a real match: probably unrelated to the query",
    )
    recency: float
    pinned: bool = False
    private: bool = False
    """Kept out of exports and never sent to a model for summaries."""
    changed: list[str] = Field(
        default_factory=list,
        description="files its turn edited whose content differs now in the caller's work tree",
    )
    branch: str | None = Field(
        default=None, description="the branch it was captured on, when not the one checked out now"
    )
    context_before: AdjacentTurn | None = Field(
        default=None, description="for a message: the turn just before it in its thread"
    )
    context_after: AdjacentTurn | None = Field(
        default=None, description="for a message: the turn just after it in its thread"
    )


class RecallResult(BaseModel):
    query: str
    results: list[RecallHit]
    skipped_channels: dict[str, str] = Field(
        default_factory=dict, description="channels that could not answer, with the reason"
    )


class ThreadInfo(BaseModel):
    thread_id: str
    memories: int


class ThreadList(BaseModel):
    threads: list[ThreadInfo]
    next_offset: int | None = Field(default=None, description="offset of the next page; null on the last")


class ForgetResult(BaseModel):
    deleted_memories: int
    deleted_notes: int
    ids: list[str] = Field(description="deleted ids (at most 500 are listed)")
    more_ids: int = Field(default=0, description="deleted ids not listed")


class NoteResult(Note):
    """A note as create_note / update_note return it."""

    duplicate: bool = Field(
        default=False,
        description="true: a live note with almost the same content existed; this is that note, "
        "nothing new was stored (pass force=true to store anyway)",
    )
    similarity: float | None = Field(
        default=None, description="cosine similarity to the existing note when duplicate"
    )
    redacted: int = Field(default=0, description="secrets replaced by [REDACTED:...] before storing")
    supersedes: str | None = Field(
        default=None,
        description="the id of a live note alike but for a value, which this one updates (now closed)",
    )
    was: str | None = Field(default=None, description="the value the superseded note held")
    pinned: bool = False
    private: bool = False
    expires_at: datetime | None = None


class MemoryPage(BaseModel):
    """One page of a memory's or note's whole text, as read_memory returns it."""

    id: str
    kind: MemoryKind
    role: str | None = None
    note_type: NoteType | None = None
    thread_id: str | None = None
    created_at: datetime
    text: str = Field(description="characters offset .. offset + len(text) of the whole text")
    offset: int
    total_chars: int
    next_offset: int | None = Field(description="pass as offset for the next page; null at the end")
