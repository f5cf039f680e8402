"""The embedded SQLite graph store's schema, its rows as models, and its neighbourhood walk query.

The schema is created idempotently by :func:`ensure_schema`.

Layout decisions, each forced by something SQLite does:

- ``notes.seq`` is an ``INTEGER PRIMARY KEY`` (the rowid) and ``notes.id`` is
  ``UNIQUE``: the FTS5 index is an external-content table keyed by rowid, and
  ``VACUUM`` may renumber the rowids of a table without an integer primary key,
  which would silently point the index at the wrong notes.
- ``links`` references notes by ``(project, user, id)``, so the database itself
  refuses a link whose endpoints live in another scope, and ``ON DELETE CASCADE``
  removes a note's links with it.
- Tags are stored as JSON (``ensure_ascii=False``) and the FTS5 table indexes that
  text directly: the ``unicode61`` tokenizer splits on the JSON punctuation, so the
  triggers can pass the column through unchanged, which keeps FTS5's ``'delete'``
  command fed with exactly the values that were indexed.
- Datetimes are fixed-width ISO 8601 UTC text, so string order is time order.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import datetime
from typing import Any

from hybrid_memory.backends._text import (
    fmt_time,
    link_times,
    note_fields,
    note_from_fields,
    parse_time_opt,
    query_terms,
    quoted_or,
)
from hybrid_memory.errors import BackendError, ConflictError
from hybrid_memory.models import Direction, Link, Note, NoteFilter, Relation, Scope, Walk

MIN_SQLITE = (3, 34, 0)
"""The neighbourhood walk uses several recursive SELECTs in one CTE, new in SQLite 3.34."""

SCHEMA_VERSION = 1
"""Stored in ``PRAGMA user_version``; bump it with a migration step in :func:`ensure_schema`."""

_DDL = """
CREATE TABLE IF NOT EXISTS notes (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    project    TEXT NOT NULL,
    user       TEXT NOT NULL,
    content    TEXT NOT NULL,
    type       TEXT NOT NULL,
    tags       TEXT NOT NULL DEFAULT '[]',
    importance REAL,
    thread_id  TEXT,
    created    TEXT NOT NULL,
    modified   TEXT NOT NULL,
    valid_from TEXT,
    valid_to   TEXT,
    UNIQUE (project, user, id)
);
CREATE INDEX IF NOT EXISTS notes_scope_created ON notes (project, user, created);
CREATE INDEX IF NOT EXISTS notes_scope_thread ON notes (project, user, thread_id);
CREATE INDEX IF NOT EXISTS notes_scope_type ON notes (project, user, type);

CREATE TABLE IF NOT EXISTS links (
    project    TEXT NOT NULL,
    user       TEXT NOT NULL,
    from_id    TEXT NOT NULL,
    to_id      TEXT NOT NULL,
    relation   TEXT NOT NULL,
    strength   REAL NOT NULL,
    created    TEXT NOT NULL,
    valid_from TEXT,
    valid_to   TEXT,
    PRIMARY KEY (project, user, from_id, to_id, relation),
    FOREIGN KEY (project, user, from_id) REFERENCES notes (project, user, id) ON DELETE CASCADE,
    FOREIGN KEY (project, user, to_id) REFERENCES notes (project, user, id) ON DELETE CASCADE
) WITHOUT ROWID;
-- Without rowid the primary key is the table, so outgoing walks read it directly. Incoming
-- walks use this index; the validity columns (and the primary key columns every index of
-- a WITHOUT ROWID table carries) make it covering, else SQLite prefers scanning the scope.
CREATE INDEX IF NOT EXISTS links_scope_to ON links (project, user, to_id, valid_from, valid_to);

CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5 (
    content, tags, content = 'notes', content_rowid = 'seq', tokenize = 'unicode61'
);
CREATE TRIGGER IF NOT EXISTS notes_fts_insert AFTER INSERT ON notes BEGIN
    INSERT INTO notes_fts (rowid, content, tags) VALUES (new.seq, new.content, new.tags);
END;
CREATE TRIGGER IF NOT EXISTS notes_fts_delete AFTER DELETE ON notes BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, content, tags)
    VALUES ('delete', old.seq, old.content, old.tags);
END;
CREATE TRIGGER IF NOT EXISTS notes_fts_update AFTER UPDATE OF content, tags ON notes BEGIN
    INSERT INTO notes_fts (notes_fts, rowid, content, tags)
    VALUES ('delete', old.seq, old.content, old.tags);
    INSERT INTO notes_fts (rowid, content, tags) VALUES (new.seq, new.content, new.tags);
END;
"""


def configure(conn: sqlite3.Connection, *, timeout_s: float) -> None:
    """Per-connection settings; they are not stored in the database file."""
    if sqlite3.sqlite_version_info < MIN_SQLITE:
        raise BackendError(
            f"The embedded graph store needs SQLite {'.'.join(map(str, MIN_SQLITE))} or newer; this "
            f"Python links SQLite {sqlite3.sqlite_version}. Use a newer Python build or set NEO4J_URI."
        )
    conn.execute(f"PRAGMA busy_timeout = {int(timeout_s * 1000)}")
    # Off by default in SQLite, and the cascade from notes to links depends on it.
    conn.execute("PRAGMA foreign_keys = ON")
    # WAL lets a second process (``hybrid-memory export``) read while the server writes.
    # synchronous stays at its FULL default: an acknowledged write survives power loss.
    conn.execute("PRAGMA journal_mode = WAL")


def ensure_schema(conn: sqlite3.Connection) -> None:
    """Create or check the schema. Safe to run on every open, from any number of processes."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise ConflictError(
            f"The graph store was written by a newer hybrid-memory (schema {version}, this one "
            f"knows {SCHEMA_VERSION}). Upgrade mcp-hybrid-memory or point it at another data directory."
        )
    # executescript() commits any open transaction first and runs the DDL as one batch;
    # the explicit transaction makes the batch and the version bump atomic.
    conn.executescript(f"BEGIN IMMEDIATE;\n{_DDL}\nPRAGMA user_version = {SCHEMA_VERSION};\nCOMMIT;")


# -- rows <-> models ---------------------------------------------------------------------------

VALID_AT = (
    "({a}.valid_from IS NULL OR {a}.valid_from <= :at) AND ({a}.valid_to IS NULL OR {a}.valid_to > :at)"
)
"""Validity at ``:at`` of the rows of table alias ``{a}``: ``valid_from <= at < valid_to``, NULL open."""


def fts_query(text: str) -> str | None:
    """Turn any user text into a safe FTS5 query: each word quoted, the words OR-ed.

    Quoting makes ``AND``/``OR``/``NOT``/``NEAR``, parentheses, ``*``, ``^`` and column
    filters plain words. None when no searchable word is left.
    """
    terms = query_terms(text)
    return quoted_or(terms) if terms else None


def note_params(note: Note) -> dict[str, Any]:
    """The named parameters of a notes row."""
    return {**note_fields(note), "tags": json.dumps(note.tags, ensure_ascii=False)}


def link_params(link: Link) -> dict[str, Any]:
    """The named parameters of a links row."""
    return {**link_times(link), "relation": link.relation.value}


def note_from_row(row: sqlite3.Row) -> Note:
    return note_from_fields(row, json.loads(row["tags"]))


def link_from_row(row: sqlite3.Row) -> Link:
    return Link(
        from_id=row["from_id"],
        to_id=row["to_id"],
        relation=Relation(row["relation"]),
        strength=row["strength"],
        project=row["project"],
        user=row["user"],
        created=datetime.fromisoformat(row["created"]),
        valid_from=parse_time_opt(row["valid_from"]),
        valid_to=parse_time_opt(row["valid_to"]),
    )


def note_where(flt: NoteFilter) -> tuple[str, dict[str, Any]]:
    """The WHERE clause over ``notes n`` for a filter; the scope is always part of it.

    List-valued filters travel as one JSON parameter each, read back with ``json_each``.
    """
    clauses = ["n.project = :project", "n.user = :user"]
    params: dict[str, Any] = {"project": flt.scope.project, "user": flt.scope.user}
    if flt.types is not None:
        clauses.append("n.type IN (SELECT value FROM json_each(:types))")
        params["types"] = json.dumps([t.value for t in flt.types])
    if flt.tags is not None:
        clauses.append(
            "EXISTS (SELECT 1 FROM json_each(n.tags) AS t"
            " WHERE t.value IN (SELECT value FROM json_each(:tags)))"
        )
        params["tags"] = json.dumps(flt.tags, ensure_ascii=False)
    if flt.thread_id is not None:
        clauses.append("n.thread_id = :thread_id")
        params["thread_id"] = flt.thread_id
    if flt.valid_at is not None:
        clauses.append(VALID_AT.format(a="n"))
        params["at"] = fmt_time(flt.valid_at)
    return " AND ".join(clauses), params


# One recursive step of the walk per direction followed: the link column matched to the
# current note ``w.id``, and the column naming the note reached. "both" uses both steps.
_STEPS: dict[Direction, tuple[tuple[str, str], ...]] = {
    Direction.OUT: (("from_id", "to_id"),),
    Direction.IN: (("to_id", "from_id"),),
    Direction.BOTH: (("from_id", "to_id"), ("to_id", "from_id")),
}


def walk_queries(scope: Scope, walk: Walk) -> tuple[str, str, dict[str, Any]]:
    """The neighbourhood's two queries: the notes reached from ``walk.note_id``, then the
    links among them (bound to ``:ids``), and the parameters both take."""
    params: dict[str, Any] = {
        "project": scope.project,
        "user": scope.user,
        "start": walk.note_id,
        "depth": walk.depth,
        "limit": walk.limit,
    }
    link_filter = ""
    note_filter = ""
    if walk.relations is not None:
        link_filter += " AND l.relation IN (SELECT value FROM json_each(:relations))"
        params["relations"] = json.dumps([r.value for r in walk.relations])
    if walk.valid_at is not None:
        link_filter += " AND " + VALID_AT.format(a="l")
        note_filter = " AND " + VALID_AT.format(a="n")
        params["at"] = fmt_time(walk.valid_at)
    # One SELECT per step, each an index lookup (the primary key for from_id, links_scope_to
    # for to_id); an OR of both would make SQLite scan every link of the scope instead.
    # CROSS JOIN pins the join order for the same reason. UNION (not UNION ALL) drops
    # repeated (id, depth) rows and depth is bounded, so cycles terminate; MIN(depth)
    # below then keeps each note once.
    steps = "\n                UNION\n".join(
        f"""
            SELECT l.{reached}, w.depth + 1
            FROM walk AS w
            CROSS JOIN links AS l
                ON l.project = :project AND l.user = :user AND l.{matched} = w.id{link_filter}
            CROSS JOIN notes AS n
                ON n.project = :project AND n.user = :user AND n.id = l.{reached}{note_filter}
            WHERE w.depth < :depth"""
        for matched, reached in _STEPS[walk.direction]
    )
    walk_sql = f"""
        WITH RECURSIVE walk (id, depth) AS (
            SELECT :start, 0
            UNION{steps}
        ),
        nearest (id, depth) AS (
            SELECT id, MIN(depth) FROM walk WHERE id <> :start GROUP BY id
        )
        SELECT n.* FROM nearest JOIN notes AS n ON n.id = nearest.id
        ORDER BY nearest.depth, n.created, n.id
        LIMIT :limit
    """
    links_sql = f"""
        SELECT l.* FROM links AS l
        WHERE l.project = :project AND l.user = :user
          AND l.from_id IN (SELECT value FROM json_each(:ids))
          AND l.to_id IN (SELECT value FROM json_each(:ids)){link_filter}
        ORDER BY l.from_id, l.to_id, l.relation
    """
    return walk_sql, links_sql, params
