"""The knowledge graph: notes and typed links."""

from __future__ import annotations

from typing import Annotated, Any

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from hybrid_memory.models import Direction, Link, Neighbourhood, Note, NoteType, Relation
from hybrid_memory.tools._common import IDEMPOTENT_WRITE, READ_ONLY, WRITE, app, tool_errors

Importance = Annotated[float | None, Field(ge=0.0, le=1.0, description="0 (trivial) to 1 (crucial)")]


def register(server: MCPServer[Any]) -> None:
    @server.tool(annotations=WRITE)
    @tool_errors
    async def create_note(
        content: Annotated[
            str, Field(description="One self-contained piece of knowledge, in a sentence or two")
        ],
        type: Annotated[
            NoteType, Field(description="fact, preference, decision, insight, question or concept")
        ],
        ctx: Context[Any, Any],
        tags: Annotated[list[str], Field(description="Short labels for filtering")] = [],  # noqa: B006
        importance: Importance = None,
        thread_id: Annotated[str | None, Field(description="The conversation it came from")] = None,
    ) -> Note:
        """Store a durable piece of knowledge as a typed note in the knowledge graph.

        Use it for what should outlive the conversation: the user's preferences, decisions
        taken, facts learned. The note is also searchable by recall_memory. Returns the note
        with its `id`; link notes with create_link.
        """
        a = app(ctx)
        return await a.service.create_note(
            a.scope, content=content, type=type, tags=tags, importance=importance, thread_id=thread_id
        )

    @server.tool(annotations=IDEMPOTENT_WRITE)
    @tool_errors
    async def update_note(
        note_id: Annotated[str, Field(description="The note's id")],
        ctx: Context[Any, Any],
        content: Annotated[str | None, Field(description="New text")] = None,
        type: Annotated[NoteType | None, Field(description="New type")] = None,
        tags: Annotated[list[str] | None, Field(description="New tags (replace the old ones)")] = None,
        importance: Importance = None,
    ) -> Note:
        """Change a note's content, type, tags or importance; its links stay."""
        a = app(ctx)
        return await a.service.update_note(
            a.scope, note_id, content=content, type=type, tags=tags, importance=importance
        )

    @server.tool(annotations=IDEMPOTENT_WRITE)
    @tool_errors
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
        ctx: Context[Any, Any],
        strength: Annotated[float, Field(ge=0.0, le=1.0, description="How strong the relation is")] = 1.0,
    ) -> Link:
        """Link two notes with a typed relation: from_id --relation--> to_id.

        Linking again with the same notes and relation updates the strength. `supersedes`
        ends the target note's validity, `contradicts` the older note's: recall then leaves
        it out unless asked.
        """
        a = app(ctx)
        return await a.service.create_link(
            a.scope, from_id=from_id, to_id=to_id, relation=relation, strength=strength
        )

    @server.tool(annotations=READ_ONLY)
    @tool_errors
    async def get_linked_notes(
        note_id: Annotated[str, Field(description="The note to start from")],
        ctx: Context[Any, Any],
        depth: Annotated[int, Field(ge=1, le=5, description="How many links away to go")] = 1,
        relations: Annotated[list[Relation] | None, Field(description="Only follow these relations")] = None,
        direction: Annotated[Direction, Field(description="out, in or both")] = Direction.BOTH,
        limit: Annotated[int, Field(ge=1, le=200, description="At most this many notes")] = 50,
    ) -> Neighbourhood:
        """The neighbourhood of a note: the note itself first, then the notes within `depth` links.

        `links` are the links among those notes, so the caller can see how each is related.
        """
        a = app(ctx)
        return await a.service.linked_notes(
            a.scope, note_id, depth=depth, relations=relations, direction=direction, limit=limit
        )
