"""What travels: the items of this machine that changed since the last sync, as one change file.

A change file is JSON Lines: a header, then items as the export format writes them
(``docs/export-format.md``, without embeddings: the receiving side embeds), each under its
project's shared name (:mod:`~hybrid_memory.transfer.sync.identity`), and a line per forgotten
item: ``{"item": "forget", "what": "memory"|"note"|"link", "id": ..., "project": ..., "user": ...}``.
Private items never enter it: they are read as an export reads them, which leaves them out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel

from hybrid_memory.models import Link
from hybrid_memory.service import MemoryService
from hybrid_memory.transfer.exporter import ScopeReader
from hybrid_memory.transfer.format import Item, item_line, kind_of, parse_item
from hybrid_memory.transfer.progress import Progress
from hybrid_memory.transfer.sync.state import Key, item_hash

FORMAT = "mcp-hybrid-memory-changes"
VERSION = 1
FORGET = "forget"
_UNSHARED = {"memory": {"last_accessed_at", "tokens"}}
"""Fields that differ between machines without anyone changing the item: when it was last
recalled here, and the token count of this machine's model."""


class ChangeHeader(BaseModel):
    format: Literal["mcp-hybrid-memory-changes"]
    version: Literal[1]
    machine: str
    seq: int
    counts: dict[str, int]


def item_id(item: Item) -> str:
    if isinstance(item, Link):
        return f"{item.from_id}|{item.to_id}|{item.relation.value}"
    return item.id


def key_of(item: Item) -> Key:
    """The key of an item whose ``project`` is its shared name."""
    return (item.project, item.user, kind_of(item), item_id(item))


def fingerprint(item: Item) -> str:
    """The hash of an item whose ``project`` is its shared name, without its machine-only fields."""
    return item_hash(item.model_dump(mode="json", exclude=_UNSHARED.get(kind_of(item), set())))


@dataclass
class Changes:
    """One side's changes since the last sync: items by key, and the keys it forgot."""

    items: dict[Key, Item] = field(default_factory=dict)
    forgotten: set[Key] = field(default_factory=set)

    def __bool__(self) -> bool:
        return bool(self.items or self.forgotten)

    def counts(self) -> dict[str, int]:
        counts = {"memory": 0, "note": 0, "link": 0, FORGET: len(self.forgotten)}
        for key in self.items:
            counts[key[2]] += 1
        return counts


async def local_changes(
    service: MemoryService, synced: dict[Key, str], shared: Callable[[str], str]
) -> Changes:
    """What this machine's stores hold that differs from ``synced``, each item under its shared name."""
    stores = service.stores
    scopes = set(await stores.graph.scopes()) | set(await stores.vectors.scopes())
    reader = ScopeReader(stores.vectors, stores.graph, Progress.disabled(), with_embeddings=False)
    changes = Changes()
    seen: set[Key] = set()
    for scope in sorted(scopes, key=lambda s: (s.project, s.user)):
        name = shared(scope.project)
        async for item, _ in reader.items(scope):
            travelling = item.model_copy(update={"project": name})
            key = key_of(travelling)
            seen.add(key)
            if synced.get(key) != fingerprint(travelling):
                changes.items[key] = travelling
    changes.forgotten = set(synced) - seen
    return changes


def render(machine: str, seq: int, changes: Changes) -> str:
    header = ChangeHeader(format=FORMAT, version=VERSION, machine=machine, seq=seq, counts=changes.counts())
    lines = [header.model_dump_json()]
    lines += [item_line(item) for item in changes.items.values()]
    for project, user, what, id_ in sorted(changes.forgotten):
        line = {"item": FORGET, "what": what, "id": id_, "project": project, "user": user}
        lines.append(json.dumps(line, ensure_ascii=False, separators=(",", ":")))
    return "".join(line + "\n" for line in lines)


def read_changes(path: Path) -> Changes:
    """A change file's items and forgets; ``ValueError`` naming the line when one is not valid."""
    changes = Changes()
    with path.open(encoding="utf-8") as lines:
        for number, text in enumerate(lines, start=1):
            if not text.strip():
                continue
            try:
                if number == 1:
                    ChangeHeader.model_validate_json(text)
                    continue
                data = json.loads(text)
                if isinstance(data, dict) and data.get("item") == FORGET:
                    changes.forgotten.add((data["project"], data["user"], data["what"], data["id"]))
                    continue
                item, _ = parse_item(text)
            except (ValueError, KeyError) as exc:
                raise ValueError(f"{path}: line {number}: {exc}") from None
            changes.items[key_of(item)] = item
    return changes


def merge(into: Changes, later: Changes) -> None:
    """Fold ``later`` (a later change file) into ``into``: a later version of an item replaces an
    earlier one, a note's only when its ``modified`` is not older; a forget wins over every version."""
    for key, item in later.items.items():
        earlier = into.items.get(key)
        if key not in into.forgotten and (earlier is None or not _older(item, earlier)):
            into.items[key] = item
    for key in later.forgotten:
        into.items.pop(key, None)
        into.forgotten.add(key)


def _older(item: Item, than: Item) -> bool:
    modified = getattr(item, "modified", None)
    other = getattr(than, "modified", None)
    return modified is not None and other is not None and modified < other
