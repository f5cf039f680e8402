"""The knowledge graph: notes and typed links."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hybrid_memory.models import Direction, Link, Neighbourhood, NoteResult, NoteType, Relation, Walk
from hybrid_memory.tools._common import SessionScope
from hybrid_memory.tools._sampling import NoteWrite
from hybrid_memory.tools.context import AppCtx, app

Importance = Annotated[float | None, Field(ge=0.0, le=1.0, description="0 (trivial) to 1 (crucial)")]


async def create_note(
    content: Annotated[str, Field(description="One self-contained piece of knowledge, in a sentence or two")],
    type: Annotated[NoteType, Field(description="fact, preference, decision, insight, question or concept")],
    ctx: AppCtx,
    scope: SessionScope,
    write: NoteWrite,
    tags: Annotated[list[str], Field(description="Short labels for filtering")] = [],  # noqa: B006
    importance: Importance = None,
    thread_id: Annotated[str | None, Field(description="The conversation it came from")] = None,
    force: Annotated[bool, Field(description="Store it even when a live note says almost the same")] = False,
    private: Annotated[bool, Field(description="Keep it out of exports")] = False,
    retention_days: Annotated[
        float | None, Field(gt=0, le=36500, description="Delete it after this many days")
    ] = None,
) -> NoteResult:
    """Store a durable piece of knowledge as a typed note in the knowledge graph.

    Use it for what should outlive the conversation: the user's preferences, decisions
    taken, facts learned. The note is also searchable by recall_memory. Returns the note
    with its `id`; link notes with create_link.

    Near-duplicates are not stored twice: when a live note of this project says almost
    the same (embedding similarity >= 0.95), that note comes back with
    `duplicate: true` and its `similarity`; pass force=true to store a new one anyway.

    Entities: a person, project or thing is a `concept` note ("Alice, the user's sister");
    link each fact about it to it (create_link(fact_id, entity_id, "part_of" or
    "relates_to")), and get_linked_notes(entity_id) returns everything known about it.
    Secrets are redacted before storing (`redacted` counts them).
    """
    # The arguments above reach the service as write.command, a NoteDraft the SDK builds from them.
    return await app(ctx).service.create_note(scope, write.command, summarizer=write.summarizer)


async def update_note(
    note_id: Annotated[str, Field(description="The note's id")],
    ctx: AppCtx,
    scope: SessionScope,
    content: Annotated[str | None, Field(description="New text")] = None,
    type: Annotated[NoteType | None, Field(description="New type")] = None,
    tags: Annotated[list[str] | None, Field(description="New tags (replace the old ones)")] = None,
    importance: Importance = None,
) -> NoteResult:
    """Change a note's content, type, tags or importance; its links, pin and privacy stay."""
    return await app(ctx).service.update_note(
        scope, note_id, content=content, type=type, tags=tags, importance=importance
    )


async def create_link(
    from_id: Annotated[str, Field(description="Id of the note the link starts at")],
    to_id: Annotated[str, Field(description="Id of the note the link points to")],
    relation: Annotated[
        Relation,
        Field(
            description="extends, contradicts, supports, example_of, part_of, relates_to, answers, "
            "caused_by, temporal, supersedes"
        ),
    ],
    ctx: AppCtx,
    scope: SessionScope,
    strength: Annotated[float, Field(ge=0.0, le=1.0, description="How strong the relation is")] = 1.0,
) -> Link:
    """Link two notes with a typed relation: from_id --relation--> to_id.

    Linking again with the same notes and relation updates the strength. `supersedes`
    ends the target note's validity, `contradicts` the older note's: recall then leaves
    it out unless asked.
    """
    return await app(ctx).service.create_link(
        scope, from_id=from_id, to_id=to_id, relation=relation, strength=strength
    )


async def get_linked_notes(
    note_id: Annotated[str, Field(description="The note to start from")],
    ctx: AppCtx,
    scope: SessionScope,
    depth: Annotated[int, Field(ge=1, le=5, description="How many links away to go")] = 1,
    relations: Annotated[list[Relation] | None, Field(description="Only follow these relations")] = None,
    direction: Annotated[Direction, Field(description="out, in or both")] = Direction.BOTH,
    limit: Annotated[int, Field(ge=1, le=200, description="At most this many notes")] = 50,
) -> Neighbourhood:
    """The neighbourhood of a note: the note itself first, then the notes within `depth` links.

    `links` are the links among those notes, so the caller can see how each is related.
    On an entity (a `concept` note whose facts link to it) this returns what is known about it.
    """
    walk = Walk(note_id=note_id, depth=depth, relations=relations, direction=direction, limit=limit)
    return await app(ctx).service.linked_notes(scope, walk)
