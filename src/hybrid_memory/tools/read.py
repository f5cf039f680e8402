"""Reading one memory or note whole, a page at a time: what a cut text's marker points at."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hybrid_memory.errors import InvalidInputError
from hybrid_memory.models import MemoryPage
from hybrid_memory.tools._common import MaxTokens, SessionScope
from hybrid_memory.tools.app import AppCtx, app
from hybrid_memory.tools.budget import DEFAULT_TOKENS, prefix_end

PAGE_OVERHEAD_TOKENS = 80
"""The page's header and continuation lines, besides its text."""


async def read_memory(
    memory_id: str,
    ctx: AppCtx,
    scope: SessionScope,
    offset: Annotated[int, Field(ge=0)] = 0,
    max_tokens: MaxTokens = DEFAULT_TOKENS,
) -> MemoryPage:
    """Read a memory or note whole, a page at a time; cut texts end with the call that reads on."""
    service = app(ctx).service
    memory = await service.read(scope, memory_id)
    text = memory.text
    if offset > len(text):
        raise InvalidInputError(
            f"offset {offset} is past the end of {memory_id} ({len(text)} characters). "
            "Pass the offset a cut text or the previous page names."
        )
    end = offset + prefix_end(text[offset:], max_tokens - PAGE_OVERHEAD_TOKENS, service.embedder)
    return MemoryPage(
        id=memory.id,
        kind=memory.kind,
        role=memory.role,
        note_type=memory.note_type,
        thread_id=memory.thread_id,
        created_at=memory.created_at,
        text=text[offset:end],
        offset=offset,
        total_chars=len(text),
        next_offset=end if end < len(text) else None,
    )
