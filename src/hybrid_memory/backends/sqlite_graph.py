"""The embedded graph store: notes, links and full-text search in one SQLite file.

Zero set-up default of :class:`~hybrid_memory.backends.base.GraphStore`. SQLite is
synchronous, so every call runs in a worker thread on one of **two** connections, one
call at a time on each: writes on one (SQLite admits a single writer anyway), reads on
the other, so a read never queues behind a write's commit (an fsync, for durability)
and sees only committed data (WAL mode). Two fixed connections rather than one per
thread, which anyio's pooled, expiring worker threads would leak. Waiting for a
connection happens on a ``CapacityLimiter(1)`` in the event loop, so queued calls hold
no worker thread and stay cancellable; a thread lock underneath makes single use a hard
invariant.
"""

from __future__ import annotations

import json
import logging
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread

from hybrid_memory.backends import _sqlite_schema
from hybrid_memory.backends._sqlite_schema import (
    fts_query,
    link_from_row,
    link_params,
    note_from_row,
    note_params,
    note_where,
    walk_queries,
)
from hybrid_memory.backends._text import note_not_found
from hybrid_memory.errors import BackendError, BackendUnavailableError, ConflictError
from hybrid_memory.models import domain

logger = logging.getLogger(__name__)

T = TypeVar("T")


def _write(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T]) -> T:
    """Run ``fn`` in one write transaction; IMMEDIATE takes the write lock up front,
    so a busy database fails at BEGIN (after busy_timeout) rather than half-way."""
    return _transaction(conn, fn, "BEGIN IMMEDIATE")


def _transaction(conn: sqlite3.Connection, fn: Callable[[sqlite3.Connection], T], begin: str) -> T:
    conn.execute(begin)
    try:
        result = fn(conn)
    except BaseException:
        if conn.in_transaction:
            conn.rollback()
        raise
    conn.commit()
    return result


class SqliteGraphStore:
    """:class:`~hybrid_memory.backends.base.GraphStore` in a single SQLite file (WAL, FTS5).

    Nothing happens until :meth:`open`. Several processes may open the same file;
    a writer waits up to ``timeout_s`` for another one before giving up.
    """

    def __init__(self, path: Path, *, timeout_s: float = 10.0) -> None:
        self._path = path
        self._timeout_s = timeout_s
        self._conn: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._limiter: anyio.CapacityLimiter | None = None
        self._reader: sqlite3.Connection | None = None
        self._read_lock = threading.Lock()
        self._read_limiter: anyio.CapacityLimiter | None = None

    async def open(self) -> None:
        """Open (creating the file and its directory if needed) and create the schema."""
        if self._conn is not None:
            return
        self._limiter, self._read_limiter = anyio.CapacityLimiter(1), anyio.CapacityLimiter(1)
        self._conn = await anyio.to_thread.run_sync(self._connect, limiter=self._limiter)
        try:
            self._reader = await anyio.to_thread.run_sync(self._connect, limiter=self._read_limiter)
        except BaseException:
            conn, self._conn = self._conn, None
            conn.close()
            raise
        logger.info("graph store open at %s", self._path)

    def _connect(self) -> sqlite3.Connection:
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            # isolation_level=None: the module never opens transactions behind our back;
            # writes go through _write().
            conn = sqlite3.connect(
                self._path, timeout=self._timeout_s, isolation_level=None, check_same_thread=False
            )
        except (OSError, sqlite3.Error) as exc:
            raise BackendError(f"Cannot open the graph store at {self._path}: {exc}") from exc
        try:
            conn.row_factory = sqlite3.Row
            _sqlite_schema.configure(conn, timeout_s=self._timeout_s)
            _sqlite_schema.ensure_schema(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise self._translate(exc) from exc
        except BaseException:
            conn.close()
            raise
        return conn

    async def close(self) -> None:
        """Close the connection; safe to call twice."""
        if self._conn is None:
            return
        conn, reader = self._conn, self._reader
        if reader is not None:
            await self._read(lambda _: reader.close())
            self._reader = None
        await self._run(lambda _: conn.close())
        self._conn = None

    def _translate(self, exc: sqlite3.Error) -> BackendError:
        if getattr(exc, "sqlite_errorcode", None) in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED) or (
            "database is locked" in str(exc)
        ):
            return BackendUnavailableError(
                f"The graph store at {self._path} stayed locked by another process for more than "
                f"{self._timeout_s:g} s. Retry shortly, or stop the other hybrid-memory process."
            )
        return BackendError(f"The graph store at {self._path} failed: {exc}")

    async def _run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn`` on the writing connection in a worker thread, mapping sqlite3 errors to ours."""
        return await self._on(self._conn, self._limiter, self._lock, fn)

    async def _read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn``, which only reads, on the reading connection."""
        return await self._on(self._reader, self._read_limiter, self._read_lock, fn)

    async def _on(
        self,
        conn: sqlite3.Connection | None,
        limiter: anyio.CapacityLimiter | None,
        lock: threading.Lock,
        fn: Callable[[sqlite3.Connection], T],
    ) -> T:
        if conn is None or limiter is None:
            raise RuntimeError("SqliteGraphStore is not open; call open() first.")

        def call() -> T:
            with lock:
                try:
                    return fn(conn)
                except sqlite3.Error as exc:
                    raise self._translate(exc) from exc

        return await anyio.to_thread.run_sync(call, limiter=limiter)

    # -- notes ---------------------------------------------------------------------------------

    async def upsert_note(self, note: domain.Note) -> None:
        """Insert or replace every field of the note with this id.

        Raises ``ConflictError`` when the id belongs to another scope: ids are global,
        and replacing would move someone else's note.
        """
        # ON CONFLICT DO UPDATE rather than INSERT OR REPLACE: REPLACE deletes the old
        # row first, which would cascade to the note's links.
        sql = """
            INSERT INTO notes (id, project, user, content, type, tags, importance, thread_id,
                               created, modified, valid_from, valid_to)
            VALUES (:id, :project, :user, :content, :type, :tags, :importance, :thread_id,
                    :created, :modified, :valid_from, :valid_to)
            ON CONFLICT (id) DO UPDATE SET
                content = excluded.content, type = excluded.type, tags = excluded.tags,
                importance = excluded.importance, thread_id = excluded.thread_id,
                created = excluded.created, modified = excluded.modified,
                valid_from = excluded.valid_from, valid_to = excluded.valid_to
            WHERE notes.project = excluded.project AND notes.user = excluded.user
        """
        params = note_params(note)

        def upsert(conn: sqlite3.Connection) -> None:
            # No row changed means the id exists and the WHERE (same scope) refused it.
            if conn.execute(sql, params).rowcount == 0:
                raise ConflictError(
                    f"Note id '{note.id}' is already used in another project or by another user; "
                    "choose a different id."
                )

        await self._run(lambda conn: _write(conn, upsert))

    async def get_notes(self, scope: domain.Scope, ids: Sequence[str]) -> list[domain.Note]:
        """The notes among ``ids`` in ``scope``; unknown ids and other scopes' ids are skipped."""
        if not ids:
            return []
        # One JSON parameter instead of one per id: no limit on the number of ids.
        sql = """
            SELECT * FROM notes
            WHERE project = ? AND user = ? AND id IN (SELECT value FROM json_each(?))
        """
        params = (scope.project, scope.user, json.dumps(list(ids), ensure_ascii=False))
        rows = await self._read(lambda conn: conn.execute(sql, params).fetchall())
        return [note_from_row(row) for row in rows]

    async def delete_note(self, scope: domain.Scope, note_id: str) -> bool:
        """Delete a note; its links go with it (``ON DELETE CASCADE``). False when absent."""
        sql = "DELETE FROM notes WHERE project = ? AND user = ? AND id = ?"
        params = (scope.project, scope.user, note_id)
        count = await self._run(lambda conn: _write(conn, lambda c: c.execute(sql, params).rowcount))
        return count > 0

    async def list_notes(self, flt: domain.NoteFilter, limit: int, offset: int = 0) -> list[domain.Note]:
        """Notes matching ``flt``, newest ``created`` first (ties: id descending)."""
        where, params = note_where(flt)
        sql = (
            f"SELECT n.* FROM notes AS n WHERE {where}"
            " ORDER BY n.created DESC, n.id DESC LIMIT :limit OFFSET :offset"
        )
        params.update(limit=max(limit, 0), offset=max(offset, 0))
        rows = await self._read(lambda conn: conn.execute(sql, params).fetchall())
        return [note_from_row(row) for row in rows]

    async def count_notes(self, flt: domain.NoteFilter) -> int:
        where, params = note_where(flt)
        sql = f"SELECT count(*) FROM notes AS n WHERE {where}"
        row = await self._read(lambda conn: conn.execute(sql, params).fetchone())
        return int(row[0])

    async def search_notes(self, text: str, flt: domain.NoteFilter, limit: int) -> list[domain.NoteHit]:
        """Full-text search over content and tags, best BM25 match first.

        Scores are ``-bm25()``: positive, higher is better. Any text is accepted; a query
        with no searchable word returns [].
        """
        query = fts_query(text)
        if query is None or limit <= 0:
            return []
        where, params = note_where(flt)
        sql = f"""
            SELECT n.*, bm25(notes_fts) AS rank
            FROM notes_fts JOIN notes AS n ON n.seq = notes_fts.rowid
            WHERE notes_fts MATCH :query AND {where}
            ORDER BY rank, n.created DESC, n.id
            LIMIT :limit
        """
        params.update(query=query, limit=limit)
        rows = await self._read(lambda conn: conn.execute(sql, params).fetchall())
        return [domain.NoteHit(note=note_from_row(row), score=-float(row["rank"])) for row in rows]

    # -- links ---------------------------------------------------------------------------------

    async def upsert_link(self, link: domain.Link) -> domain.Link:
        """Create the link, or update strength and validity of the one with the same
        (scope, from, to, relation), keeping its ``created``. Returns what is stored.

        Raises ``NotFoundError`` naming an endpoint that is not a note of the link's scope.
        """
        sql = """
            INSERT INTO links (project, user, from_id, to_id, relation, strength, created,
                               valid_from, valid_to)
            VALUES (:project, :user, :from_id, :to_id, :relation, :strength, :created,
                    :valid_from, :valid_to)
            ON CONFLICT (project, user, from_id, to_id, relation) DO UPDATE SET
                strength = excluded.strength, valid_from = excluded.valid_from,
                valid_to = excluded.valid_to
        """
        params = link_params(link)

        def upsert(conn: sqlite3.Connection) -> domain.Link:
            # Checked here, not left to the foreign key, to name the missing note.
            found = {
                row[0]
                for row in conn.execute(
                    "SELECT id FROM notes WHERE project = ? AND user = ? AND id IN (?, ?)",
                    (link.project, link.user, link.from_id, link.to_id),
                )
            }
            for note_id in (link.from_id, link.to_id):
                if note_id not in found:
                    raise note_not_found(note_id)
            conn.execute(sql, params)
            stored = conn.execute(
                "SELECT * FROM links"
                " WHERE project = ? AND user = ? AND from_id = ? AND to_id = ? AND relation = ?",
                (link.project, link.user, link.from_id, link.to_id, link.relation.value),
            )
            return link_from_row(stored.fetchone())

        return await self._run(lambda conn: _write(conn, upsert))

    async def delete_link(
        self, scope: domain.Scope, from_id: str, to_id: str, relation: domain.Relation
    ) -> bool:
        """Delete one link; False when it did not exist in ``scope``."""
        sql = (
            "DELETE FROM links WHERE project = ? AND user = ? AND from_id = ? AND to_id = ? AND relation = ?"
        )
        params = (scope.project, scope.user, from_id, to_id, relation.value)
        count = await self._run(lambda conn: _write(conn, lambda c: c.execute(sql, params).rowcount))
        return count > 0

    async def list_links(self, scope: domain.Scope, limit: int, offset: int = 0) -> list[domain.Link]:
        """Links of ``scope`` by (from_id, to_id, relation): the primary key's order, so stable."""
        sql = (
            "SELECT * FROM links WHERE project = ? AND user = ?"
            " ORDER BY from_id, to_id, relation LIMIT ? OFFSET ?"
        )
        params = (scope.project, scope.user, max(limit, 0), max(offset, 0))
        rows = await self._read(lambda conn: conn.execute(sql, params).fetchall())
        return [link_from_row(row) for row in rows]

    async def scopes(self) -> list[domain.Scope]:
        """Every (project, user) holding a note, sorted; links live inside a note's scope."""
        sql = "SELECT DISTINCT project, user FROM notes ORDER BY project, user"
        rows = await self._read(lambda conn: conn.execute(sql).fetchall())
        return [domain.Scope(project=row["project"], user=row["user"]) for row in rows]

    async def move_scope(self, scope: domain.Scope, project: str) -> int:
        """Every note of ``scope`` and its links to ``project``; see ``GraphStore.move_scope``."""
        params = (project, scope.project, scope.user)

        def move(conn: sqlite3.Connection) -> int:
            # The links' keys point at the notes' (project, user, id): checked once both moved.
            conn.execute("PRAGMA defer_foreign_keys = ON")
            notes = conn.execute("UPDATE notes SET project = ? WHERE project = ? AND user = ?", params)
            conn.execute("UPDATE links SET project = ? WHERE project = ? AND user = ?", params)
            return int(notes.rowcount)

        return await self._run(lambda conn: _write(conn, move))

    async def neighbourhood(self, scope: domain.Scope, walk: domain.Walk) -> domain.Neighbourhood:
        """The notes and links around ``walk.note_id``; see ``GraphStore.neighbourhood``."""
        if walk.empty:
            return domain.Neighbourhood(notes=[], links=[])
        walk_sql, links_sql, params = walk_queries(scope, walk)

        def traverse(conn: sqlite3.Connection) -> tuple[list[sqlite3.Row], list[sqlite3.Row]]:
            note_rows = conn.execute(walk_sql, params).fetchall()
            if not note_rows:
                return [], []
            ids = [walk.note_id, *(row["id"] for row in note_rows)]
            link_rows = conn.execute(links_sql, {**params, "ids": json.dumps(ids, ensure_ascii=False)})
            return note_rows, link_rows.fetchall()

        # One read transaction: both queries see the same snapshot even while another process writes.
        note_rows, link_rows = await self._read(lambda conn: _transaction(conn, traverse, "BEGIN"))
        return domain.Neighbourhood(
            notes=[note_from_row(row) for row in note_rows],
            links=[link_from_row(row) for row in link_rows],
        )
