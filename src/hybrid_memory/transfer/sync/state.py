"""What this machine knows of one remote, kept beside the stores (``sync/<key>/state.sqlite``).

- ``synced``: every item both sides agreed on at the last sync, by key, with a hash of how it
  was. A scan of the stores against it tells what changed here since (hash differs), what is
  new (no row) and what was forgotten (a row whose item is gone) -- so the stores keep no
  record of deletions for sync's sake.
- ``applied``: per machine, the last change file whose content is in this machine's stores
  (this machine's own files included: written and pushed, then recorded).
- ``names``: what each local project is called between machines, fixed when first seen, so a
  repository whose folder is deleted or whose remote is renamed keeps its name.

Each step records in one transaction after the stores were written, so a sync cut off at any
point is done again from the last step it recorded, and doing it again stores nothing twice.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import uuid
from collections.abc import Iterable, Iterator
from contextlib import closing, contextmanager
from pathlib import Path

Key = tuple[str, str, str, str]
"""(shared project name, user, kind, id): kind is ``memory``, ``note`` or ``link``; a link's id is
``from|to|relation``."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS synced (
    project TEXT NOT NULL, user TEXT NOT NULL, kind TEXT NOT NULL, id TEXT NOT NULL, hash TEXT NOT NULL,
    PRIMARY KEY (project, user, kind, id)
);
CREATE TABLE IF NOT EXISTS applied (machine TEXT PRIMARY KEY, seq INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS names (project TEXT PRIMARY KEY, shared TEXT NOT NULL);
"""


def machine_id(sync_dir: Path) -> str:
    """This data dir's name on every remote: made once, kept in ``sync/machine``."""
    path = sync_dir / "machine"
    try:
        return path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        sync_dir.mkdir(parents=True, exist_ok=True)
        made = uuid.uuid4().hex[:16]
        tmp = path.with_name(".machine.tmp")
        tmp.write_text(made + "\n", encoding="utf-8")
        tmp.replace(path)
        return made


def item_hash(data: dict[str, object]) -> str:
    """A fingerprint of an item as it travels (its shared project name in it)."""
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class SyncState:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    def synced(self) -> dict[Key, str]:
        with closing(self._db.execute("SELECT project, user, kind, id, hash FROM synced")) as rows:
            return {(p, u, k, i): h for p, u, k, i, h in rows}

    def agree(self, items: Iterable[tuple[Key, str]], forgotten: Iterable[Key]) -> None:
        """Record what both sides now hold; call inside :meth:`transaction`."""
        self._db.executemany(
            "INSERT OR REPLACE INTO synced VALUES (?, ?, ?, ?, ?)", [(*key, h) for key, h in items]
        )
        self._db.executemany(
            "DELETE FROM synced WHERE project = ? AND user = ? AND kind = ? AND id = ?", list(forgotten)
        )

    def applied(self) -> dict[str, int]:
        with closing(self._db.execute("SELECT machine, seq FROM applied")) as rows:
            return dict(rows.fetchall())

    def set_applied(self, machine: str, seq: int) -> None:
        self._db.execute("INSERT OR REPLACE INTO applied VALUES (?, ?)", (machine, seq))

    def names(self) -> dict[str, str]:
        with closing(self._db.execute("SELECT project, shared FROM names")) as rows:
            return dict(rows.fetchall())

    def name(self, project: str, shared: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO names VALUES (?, ?)", (project, shared))
