"""forget: delete memories or notes by id, a whole thread's messages, or a whole project, from both stores."""

from __future__ import annotations

from collections.abc import Sequence

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.errors import InvalidInputError, NotFoundError
from hybrid_memory.models import ForgetResult, MemoryFilter, MemoryKind, NoteFilter, Scope

MAX_LISTED_IDS = 500
_PAGE = 256


async def _memory_ids(vectors: VectorStore, flt: MemoryFilter) -> list[str]:
    ids: list[str] = []
    offset: str | None = None
    while True:
        page, offset = await vectors.scroll(flt, _PAGE, offset)
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
        thread = MemoryFilter(scope=scope, thread_id=thread_id, kinds=[MemoryKind.MESSAGE])
        memory_ids.extend(await _memory_ids(vectors, thread))
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
    return _result(deleted_memories, deleted_notes, deleted_ids)


async def forget_project(vectors: VectorStore, graph: GraphStore, scope: Scope) -> ForgetResult:
    """Delete every memory and every note (with its links) of the scope's project, expired ones too."""
    note_ids: list[str] = []
    while page := await graph.list_notes(NoteFilter(scope=scope), _PAGE, len(note_ids)):
        note_ids.extend(note.id for note in page)
    deleted_ids = [note_id for note_id in note_ids if await graph.delete_note(scope, note_id)]
    deleted_notes = len(deleted_ids)
    memory_ids = await _memory_ids(vectors, MemoryFilter(scope=scope))
    deleted_memories = await vectors.delete(scope, memory_ids) if memory_ids else 0
    notes = set(deleted_ids)  # a note is indexed for recall under its own id
    deleted_ids.extend(i for i in memory_ids if i not in notes)
    return _result(deleted_memories, deleted_notes, deleted_ids)


def _result(deleted_memories: int, deleted_notes: int, deleted_ids: list[str]) -> ForgetResult:
    return ForgetResult(
        deleted_memories=deleted_memories,
        deleted_notes=deleted_notes,
        ids=deleted_ids[:MAX_LISTED_IDS],
        more_ids=max(0, len(deleted_ids) - MAX_LISTED_IDS),
    )
