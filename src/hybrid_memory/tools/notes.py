"""The knowledge graph: notes and typed links."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hybrid_memory.models import Direction, Link, Neighbourhood, NoteResult, NoteType, Relation, Walk
from hybrid_memory.service import NoteUpdate
from hybrid_memory.tools._common import Importance, MaxTokens, RetentionDays, SessionScope
from hybrid_memory.tools._sampling import NoteWrite
from hybrid_memory.tools.app import AppCtx, app
from hybrid_memory.tools.budget import DEFAULT_TOKENS


async def create_note(
    content: Annotated[str, Field(description="one self-contained fact")],
    type: NoteType,
    ctx: AppCtx,
    scope: SessionScope,
    write: NoteWrite,
    tags: list[str] = [],  # noqa: B006
    importance: Importance = None,
    thread_id: str | None = None,
    force: Annotated[bool, Field(description="store even if a near-duplicate exists")] = False,
    private: Annotated[bool, Field(description="never exported")] = False,
    retention_days: RetentionDays = None,
) -> NoteResult:
    """Store durable knowledge (preferences, decisions, facts) as a typed note, also recallable.

    A near-duplicate is returned instead (duplicate=true). Entities: a concept note with facts linked.
    """
    # The arguments above reach the service as write.command, a NoteDraft the SDK builds from them.
    return await app(ctx).service.create_note(scope, write.command, summarizer=write.summarizer)


async def update_note(
    note_id: str,
    ctx: AppCtx,
    scope: SessionScope,
    content: str | None = None,
    type: NoteType | None = None,
    tags: Annotated[list[str] | None, Field(description="replace the old ones")] = None,
    importance: Importance = None,
) -> NoteResult:
    """Change a note's content, type, tags or importance; its links stay."""
    change = NoteUpdate(content=content, type=type, tags=tags, importance=importance)
    return await app(ctx).service.update_note(scope, note_id, change)


async def create_link(
    from_id: str,
    to_id: str,
    relation: Relation,
    ctx: AppCtx,
    scope: SessionScope,
    strength: Annotated[float, Field(ge=0.0, le=1.0)] = 1.0,
) -> Link:
    """Link two notes: from_id --relation--> to_id. supersedes/contradicts end the older note's validity."""
    return await app(ctx).service.create_link(
        scope, from_id=from_id, to_id=to_id, relation=relation, strength=strength
    )


async def get_linked_notes(
    note_id: str,
    ctx: AppCtx,
    scope: SessionScope,
    depth: Annotated[int, Field(ge=1, le=5)] = 1,
    relations: list[Relation] | None = None,
    direction: Direction = Direction.BOTH,
    limit: Annotated[int, Field(ge=1, le=200)] = 50,
    max_tokens: MaxTokens = DEFAULT_TOKENS,
) -> Neighbourhood:
    """A note, the notes within depth links of it, and the links among them."""
    walk = Walk(note_id=note_id, depth=depth, relations=relations, direction=direction, limit=limit)
    return await app(ctx).service.linked_notes(scope, walk)
