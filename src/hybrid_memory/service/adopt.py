"""Moving a project's memory under another name, losing nothing.

Projects were once named by their folder's last segment; they are now named by their
repository (:mod:`hybrid_memory.projects`). The first time a directory's project is used,
whatever its old name holds moves to the new one (:func:`move_project`). A move writes
every memory under the new name before deleting the old copies, so a move cut short
leaves copies in both, never none, and running it again finishes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from hybrid_memory.models import Memory, MemoryFilter, MemoryKind, NoteFilter, Scope
from hybrid_memory.service.indexer import context_tail
from hybrid_memory.service.stores import Stores
from hybrid_memory.service.writes.threads import memory_id

PAGE = 256


@dataclass
class Moved:
    memories: int = 0
    notes: int = 0


def _renamed(memory: Memory, project: str, ids: dict[str, str]) -> Memory:
    def new(i: str | None) -> str | None:
        return None if i is None else ids.get(i, i)

    return memory.model_copy(
        update={
            "id": ids[memory.id],
            "project": project,
            "prev_id": new(memory.prev_id),
            "next_id": new(memory.next_id),
            "replaces": [ids.get(i, i) for i in memory.replaces],
        }
    )


def _new_id(memory: Memory, to: Scope) -> str:
    """A message's id derives from its scope (so it is stored once); other memories keep theirs."""
    if memory.kind is MemoryKind.MESSAGE and memory.thread_id and memory.message_id:
        return memory_id(to, memory.thread_id, memory.message_id, memory.chunk_index)
    return memory.id


async def _memories(stores: Stores, flt: MemoryFilter) -> list[Memory]:
    found: list[Memory] = []
    offset: str | None = None
    while True:
        page, offset = await stores.vectors.scroll(flt, PAGE, offset)
        found.extend(page)
        if offset is None:
            return found


async def move_project(
    stores: Stores, old: Scope, project: str, threads: Sequence[str] | None = None
) -> Moved:
    """Move every memory, note and link of ``old`` to ``project`` (same user); idempotent.

    ``threads``: only the memories of these threads move (notes and links stay).
    """
    to = Scope(project=project, user=old.user)
    moved = Moved()
    if to == old:
        return moved
    if threads is None:
        found = await _memories(stores, MemoryFilter(scope=old))
    else:
        # A note's searchable copy stays with its note, which a thread's move leaves where it is.
        kinds = [k for k in MemoryKind if k is not MemoryKind.NOTE]
        found = [
            m
            for t in dict.fromkeys(threads)
            for m in await _memories(stores, MemoryFilter(scope=old, thread_id=t, kinds=kinds))
        ]
    ids = {m.id: _new_id(m, to) for m in found}
    tails = {ids[m.id]: context_tail(m.text) for m in found}
    for start in range(0, len(found), PAGE):
        batch = found[start : start + PAGE]
        dense = await stores.vectors.dense_vectors(old, [m.id for m in batch])
        # The same vectors, under the new name: nothing is embedded again.
        await stores.indexer.store(
            [_renamed(m, project, ids) for m in batch], dense=[dense.get(m.id) for m in batch], known=tails
        )
    # A memory that kept its id was moved by the write itself; the others' old copies go now.
    await stores.vectors.delete(old, [i for i, new in ids.items() if new != i])
    moved.memories = len(found)
    if threads is None:
        moved.notes = await stores.graph.move_scope(old, project)
    return moved


async def holds_anything(stores: Stores, scope: Scope) -> bool:
    """Whether ``scope`` has a memory or a note (one small read each)."""
    if await stores.vectors.count(MemoryFilter(scope=scope)):
        return True
    return bool(await stores.graph.count_notes(NoteFilter(scope=scope)))
