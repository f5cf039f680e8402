"""Recall: the hybrid search over everything remembered."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

from pydantic import Field

from hybrid_memory.models import MemoryKind, NoteType, RecallResult
from hybrid_memory.service import RecallOptions
from hybrid_memory.tools._common import MaxTokens, SessionRoot, SessionScope, as_utc
from hybrid_memory.tools.app import AppCtx, app
from hybrid_memory.tools.budget import DEFAULT_TOKENS


async def recall_memory(
    query: str,
    ctx: AppCtx,
    scope: SessionScope,
    root: SessionRoot,
    thread_id: str | None = None,
    limit: Annotated[int, Field(ge=1, le=50)] = 5,
    kinds: list[MemoryKind] | None = None,
    note_types: list[NoteType] | None = None,
    tags: Annotated[list[str] | None, Field(description="any of")] = None,
    since: datetime | None = None,
    until: datetime | None = None,
    as_of: Annotated[datetime | None, Field(description="memory as it stood then")] = None,
    include_invalid: Annotated[bool, Field(description="also superseded notes")] = False,
    explain: Annotated[bool, Field(description="why each ranked")] = False,
    max_tokens: MaxTokens = DEFAULT_TOKENS,
    min_score: Annotated[float, Field(ge=0, le=1, description="least match")] = 0.0,
    with_context: bool = True,
) -> RecallResult:
    """Search past conversations and notes (meaning, keywords, knowledge graph), best first.

    Call before answering anything that may depend on earlier sessions. Cite hits as [memory:<id>].
    Dates are ISO 8601; with_context adds each message's neighbouring turns.
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
        work_tree=root,
    )
    return await app(ctx).service.recall(scope, query, options)
