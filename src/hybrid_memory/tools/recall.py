"""Recall: the hybrid search over everything remembered."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field

from hybrid_memory.models import MemoryKind, NoteType, RecallResult
from hybrid_memory.service import RecallOptions
from hybrid_memory.tools._common import SessionScope, as_utc
from hybrid_memory.tools.context import AppCtx, app


async def recall_memory(
    query: Annotated[str, Field(description="What you want to remember, in plain words")],
    ctx: AppCtx,
    scope: SessionScope,
    thread_id: Annotated[str | None, Field(description="Only this conversation; default: all")] = None,
    limit: Annotated[int, Field(ge=1, le=50, description="How many results")] = 5,
    kinds: Annotated[
        list[MemoryKind] | None, Field(description="Only these kinds: message, note, summary")
    ] = None,
    note_types: Annotated[list[NoteType] | None, Field(description="Only notes of these types")] = None,
    tags: Annotated[list[str] | None, Field(description="Only items carrying any of these tags")] = None,
    since: Annotated[datetime | None, Field(description="Only items created at or after (ISO 8601)")] = None,
    until: Annotated[datetime | None, Field(description="Only items created before (ISO 8601)")] = None,
    include_invalid: Annotated[
        bool, Field(description="Also return notes that were superseded or contradicted")
    ] = False,
    as_of: Annotated[
        datetime | None,
        Field(description="Answer as memory stood at this time (ISO 8601): what existed and was valid then"),
    ] = None,
    min_score: Annotated[
        float,
        Field(
            ge=0,
            le=1,
            description="Leave out results whose `match` is below this; 0.3 drops most unrelated text",
        ),
    ] = 0.0,
    with_context: Annotated[
        bool, Field(description="Give each message result the turns just before and after it")
    ] = True,
) -> RecallResult:
    """Search long-term memory: past conversation messages and notes, best first.

    Combines meaning (vector search), exact words (keyword search) and the knowledge
    graph (notes and the notes linked to them). Each result says which channels found
    it (`channels`, `ranks`). Message results carry `thread_id` and `message_id`;
    note results carry the note id for create_link / get_linked_notes. With `as_of`,
    only what had been recorded by then and was valid then is returned (a note
    superseded later comes back; one created later does not).
    """
    options = RecallOptions(
        thread_id=thread_id,
        limit=limit,
        kinds=kinds,
        note_types=note_types,
        tags=tags,
        since=None if since is None else as_utc(since),
        until=None if until is None else as_utc(until),
        include_invalid=include_invalid,
        as_of=None if as_of is None else as_utc(as_of),
        min_score=min_score,
        context=with_context,
    )
    return await app(ctx).service.recall(scope, query, options)
