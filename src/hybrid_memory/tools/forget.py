"""Forgetting: delete memories, notes, or whole threads."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hybrid_memory.models import ForgetResult
from hybrid_memory.tools._common import SessionScope
from hybrid_memory.tools.app import AppCtx, app


async def forget(
    ctx: AppCtx,
    scope: SessionScope,
    ids: Annotated[list[str], Field(max_length=500)] = [],  # noqa: B006
    thread_id: Annotated[str | None, Field(description="forget all its messages")] = None,
) -> ForgetResult:
    """Permanently delete memories or notes (with their links) by id, or a whole thread."""
    return await app(ctx).service.forget(scope, ids=ids, thread_id=thread_id)
