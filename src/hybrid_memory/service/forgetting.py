"""forget: delete memories or notes by id, or a whole thread's messages, from both stores."""

from __future__ import annotations

from collections.abc import Sequence

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.errors import InvalidInputError, NotFoundError
from hybrid_memory.models import ForgetResult, MemoryFilter, MemoryKind, Scope

MAX_LISTED_IDS = 500


async def _thread_memory_ids(vectors: VectorStore, scope: Scope, thread_id: str) -> list[str]:
    flt = MemoryFilter(scope=scope, thread_id=thread_id, kinds=[MemoryKind.MESSAGE])
    ids: list[str] = []
    offset: str | None = None
    while True:
        page, offset = await vectors.scroll(flt, 256, offset)
        ids.extend(m.id for m in page)
        if offset is None:
            return ids


async def forget(
    vectors: VectorStore,
    graph: GraphStore,
    scope: Scope,
    *,
    ids: Sequence[str] = (),
    thread_id: str | None = None,
) -> ForgetResult:
    """Delete memories or notes by id, or a whole thread's messages."""
    if not ids and thread_id is None:
        raise InvalidInputError("Pass ids (memory or note ids from recall_memory) or a thread_id to forget.")
    deleted_notes = 0
    deleted_ids: list[str] = []
    for note in await graph.get_notes(scope, list(ids)):
        if await graph.delete_note(scope, note.id):
            deleted_notes += 1
            deleted_ids.append(note.id)
    memory_ids = list(ids)
    if thread_id is not None:
        memory_ids.extend(await _thread_memory_ids(vectors, scope, thread_id))
    present = [m.id for m in await vectors.get(scope, memory_ids)]
    deleted_memories = await vectors.delete(scope, present) if present else 0
    deleted_ids.extend(i for i in present if i not in deleted_ids)
    missing = [i for i in ids if i not in deleted_ids]
    if ids and missing and not deleted_ids:
        named = ", ".join(repr(m) for m in missing[:5])
        raise NotFoundError(
            f"Nothing to forget: no memory or note {named} in this project. "
            "recall_memory returns the ids you can forget."
        )
    return ForgetResult(
        deleted_memories=deleted_memories,
        deleted_notes=deleted_notes,
        ids=deleted_ids[:MAX_LISTED_IDS],
        more_ids=max(0, len(deleted_ids) - MAX_LISTED_IDS),
    )
