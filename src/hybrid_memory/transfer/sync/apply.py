"""Bring what other machines changed into this one's stores, by the stated conflict rule.

The rule (``docs/sync.md``), for an item changed on both sides since they last agreed:

- a forget wins over any change made to the item elsewhere that it had not seen;
- a note: the version with the later ``modified`` wins (this machine's on a tie);
- a note's searchable copy goes with its note; any other memory, or a link: this machine's
  version wins, and travels on -- so the machine that syncs last decides, and both agree after it.

Supersedes need no rule of their own: a ``supersedes`` link is a link (links of both sides are
kept, a union), and the note it closed carries its ``valid_to`` as any edit does.
Items are written as ``hybrid-memory import`` writes them (embedded here by this machine's
model, an item equal to the stored one skipped), so applying the same changes twice stores
nothing twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from hybrid_memory.models import Link, Memory, MemoryKind, Note, Relation, Scope
from hybrid_memory.service import MemoryService
from hybrid_memory.transfer.format import Item, scope_of
from hybrid_memory.transfer.importer import write_items
from hybrid_memory.transfer.progress import Progress
from hybrid_memory.transfer.sync.changes import Changes, fingerprint
from hybrid_memory.transfer.sync.state import Key


@dataclass
class Applied:
    agreed: list[tuple[Key, str]] = field(default_factory=list)
    forgotten: list[Key] = field(default_factory=list)
    written: dict[str, int] = field(default_factory=lambda: {"memory": 0, "note": 0, "link": 0})
    deleted: int = 0


def resolve(incoming: Changes, local: Changes) -> None:
    """Drop from each side what the other wins (the module's rule); both are changed in place."""
    for key in incoming.forgotten:
        local.items.pop(key, None)
        local.forgotten.discard(key)
    notes_taken: set[tuple[str, str, str]] = set()
    for key, item in list(incoming.items.items()):
        if key in local.forgotten:
            del incoming.items[key]
            continue
        mine = local.items.get(key)
        if mine is None:
            if isinstance(item, Note):
                notes_taken.add((key[0], key[1], key[3]))
        elif isinstance(item, Note) and isinstance(mine, Note) and item.modified > mine.modified:
            local.items.pop(key)
            notes_taken.add((key[0], key[1], key[3]))
        elif not (isinstance(item, Memory) and item.kind == MemoryKind.NOTE):
            del incoming.items[key]
    for key, item in list(incoming.items.items()):
        if isinstance(item, Memory) and item.kind == MemoryKind.NOTE and key in local.items:
            if (key[0], key[1], key[3]) in notes_taken:
                local.items.pop(key)
            else:
                del incoming.items[key]


async def apply(service: MemoryService, incoming: Changes, to_local: Callable[[str], str]) -> Applied:
    """Write ``incoming`` (already resolved) into the stores, each item under its local project."""
    done = Applied()
    graph, vectors = service.stores.graph, service.stores.vectors
    for key in sorted(incoming.forgotten):
        shared, user, what, id_ = key
        scope = Scope(project=to_local(shared), user=user)
        if what == "note":
            done.deleted += await graph.delete_note(scope, id_)
        elif what == "memory":
            done.deleted += await vectors.delete(scope, [id_])
        else:
            from_id, to_id, relation = id_.split("|", 2)
            done.deleted += await graph.delete_link(scope, from_id, to_id, Relation(relation))
        done.forgotten.append(key)
    items: list[Item] = []
    for key, item in incoming.items.items():
        items.append(item.model_copy(update={"project": to_local(key[0])}))
        done.agreed.append((key, fingerprint(item)))
    items = await _joinable(service, items)
    if items:
        result = await write_items(service, items, Progress.disabled())
        done.written = result.written
    return done


async def _joinable(service: MemoryService, items: list[Item]) -> list[Item]:
    """``items`` without the links whose notes this machine does not hold (forgotten here, or private
    on the other side): a link joins two notes of its scope or is not stored."""
    coming = {(scope_of(i), i.id) for i in items if isinstance(i, Note)}
    wanted: dict[Scope, set[str]] = {}
    for link in (i for i in items if isinstance(i, Link)):
        for end in (link.from_id, link.to_id):
            if (scope_of(link), end) not in coming:
                wanted.setdefault(scope_of(link), set()).add(end)
    held = set(coming)
    for scope, ids in wanted.items():
        held.update((scope, note.id) for note in await service.stores.graph.get_notes(scope, sorted(ids)))
    return [
        i
        for i in items
        if not isinstance(i, Link) or {(scope_of(i), i.from_id), (scope_of(i), i.to_id)} <= held
    ]
