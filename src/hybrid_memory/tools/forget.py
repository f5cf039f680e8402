"""Forgetting: delete memories, notes, or whole threads."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from hybrid_memory.models import ForgetResult
from hybrid_memory.tools._common import SessionScope
from hybrid_memory.tools.context import AppCtx, app


async def forget(
    ctx: AppCtx,
    scope: SessionScope,
    ids: Annotated[
        list[str],
        Field(max_length=500, description="Memory or note ids (from recall_memory / create_note)"),
    ] = [],  # noqa: B006
    thread_id: Annotated[str | None, Field(description="Forget every message of this thread")] = None,
) -> ForgetResult:
    """Permanently delete memories or notes by id, or every message of a thread.

    Deleting a note also deletes its links. Use it when the user asks to forget
    something or when a memory is wrong; prefer update_note to correct a note.
    """
    return await app(ctx).service.forget(scope, ids=ids, thread_id=thread_id)
