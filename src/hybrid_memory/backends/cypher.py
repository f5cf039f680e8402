"""Every Cypher statement of the Neo4j graph store, as constants with ``$parameters`` only,
and the mapping between models and those parameters and records.

No statement is ever built from user data. The only text assembled at import time
is (a) shared fragments (the note projection, the note filter) and (b) one
``MERGE`` per :class:`~hybrid_memory.models.Relation`, whose relationship type comes
from the closed enum, never from input.

Graph shape
-----------
- Node label ``Note`` (the only label). Properties: ``id`` (globally unique),
  ``project``, ``user``, ``content``, ``type``, ``tags`` (list of strings),
  ``importance``, ``thread_id``, ``created``, ``modified``, ``valid_from``,
  ``valid_to``, and ``search_text`` (content and tags reduced to lower-case words
  joined by single spaces, which feeds the full-text index).
- One relationship type per relation: ``EXTENDS``, ``CONTRADICTS``, ... (the enum
  value upper-cased, :data:`REL_TYPES`). Properties: ``strength``, ``created``,
  ``valid_from``, ``valid_to``. The scope is that of both endpoints, which the
  store only ever joins within one scope.
- Datetimes are fixed-width ISO 8601 UTC strings (``2026-01-02T03:04:05.000006+00:00``):
  string order is time order, they round-trip to the microsecond, and they rely on no
  temporal type of the server, so Neo4j, ArcadeDB and the SQLite store agree.

Why typed relationships rather than one ``LINK`` type with a ``relation`` property
------------------------------------------------------------------------------------
Neo4j keeps a relationship's type in the relationship record itself and groups a
dense node's relationships by type, so ``type(r) IN $rel_types`` filters a hop
without touching the property store, where ``r.relation IN $relations`` would read
a property per candidate edge. ArcadeDB maps each relationship type to an edge
type of its own, so the same filter is a type check there too. The graph also
reads naturally in Neo4j Browser and Bloom (``(a)-[:CONTRADICTS]->(b)``), and the
lint schema can name every type. The cost is small: Cypher cannot parameterise a
type in a pattern, so only the ``MERGE`` that creates a link needs the type in its
text, and :data:`UPSERT_LINK` holds one statement per relation, generated here from
the enum. Every read filters with ``type(r) IN $rel_types``, which needs no text.

Traversal is a breadth-first walk, one :data:`EXPAND_OUT` / ``_IN`` / ``_BOTH`` query
per hop with the frontier as a parameter, instead of a variable-length pattern:
``*1..n`` cannot take its bound from a parameter, Neo4j enumerates every path
(exponential on a dense neighbourhood) where a walk visits each note once, and the
per-hop form sidesteps the differences between Neo4j's and ArcadeDB's
variable-length path semantics.

ArcadeDB (the Bolt server the test suite runs against) needs different text for a
few statements; those variants live in :data:`ARCADEDB_OVERRIDES` and are chosen by
the backend only. ``docs/arcadedb-differences.md`` lists every difference.

Full-text search
----------------
``search_text`` holds the note's words as this module's tokenizer sees them (letters
and digits, lower-cased, single spaces), so Neo4j's Lucene analyzer and ArcadeDB's
``split()`` find exactly the words the query side looks for, and the search query is
built from words only (:func:`lucene_query`), each quoted: no operator of the user's
text reaches Lucene. Tokenizer and stop words match the SQLite store's, so both graph
backends treat the same text as the same words.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from types import MappingProxyType
from typing import Any, Final

from hybrid_memory.backends._text import (
    WORD,
    fmt_time_opt,
    link_times,
    note_fields,
    note_from_fields,
    parse_time_opt,
    quoted_or,
)
from hybrid_memory.models import Link, Note, NoteFilter, Relation

LABEL: Final = "Note"
FULLTEXT_INDEX: Final = "note_search"

REL_TYPES: Final[MappingProxyType[Relation, str]] = MappingProxyType(
    {relation: relation.value.upper() for relation in Relation}
)
"""Relationship type of each relation; the only source of types that appear in query text."""

RELATIONS_BY_TYPE: Final[MappingProxyType[str, Relation]] = MappingProxyType(
    {rel_type: relation for relation, rel_type in REL_TYPES.items()}
)

NOTE_PROPERTIES: Final = (
    *("id", "project", "user", "content", "type", "tags", "importance", "thread_id"),
    *("created", "modified", "valid_from", "valid_to", "search_text"),
)
LINK_PROPERTIES: Final = ("strength", "created", "valid_from", "valid_to")
PARAMETERS: Final = frozenset(
    {
        *("id", "ids", "project", "user", "content", "type", "tags", "importance", "thread_id"),
        *("created", "modified", "valid_from", "valid_to", "search_text"),
        *("types", "valid_at", "limit", "offset", "query", "terms", "timeout_s"),
        *("from_id", "to_id", "strength", "rel_type", "rel_types", "frontier", "to_project"),
    }
)
"""Every ``$parameter`` a statement may use; the Cypher lint reports any other."""

# -- fragments (not statements on their own) ---------------------------------------------------

_NOTE_MAP = (
    "{.id, .project, .user, .content, .type, .tags, .importance, .thread_id,"
    " .created, .modified, .valid_from, .valid_to}"
)


def _valid(var: str) -> str:
    """``var`` is valid at ``$valid_at``: valid_from <= t < valid_to, a missing bound is open."""
    return (
        f"({var}.valid_from IS NULL OR {var}.valid_from <= $valid_at)"
        f" AND ({var}.valid_to IS NULL OR {var}.valid_to > $valid_at)"
    )


_NOTE_FILTER = f"""n.project = $project AND n.user = $user
  AND ($types IS NULL OR n.type IN $types)
  AND ($tags IS NULL OR any(tag IN n.tags WHERE tag IN $tags))
  AND ($thread_id IS NULL OR n.thread_id = $thread_id)
  AND ($valid_at IS NULL OR ({_valid("n")}))"""

# -- schema --------------------------------------------------------------------------------------

CREATE_NOTE_ID_CONSTRAINT: Final = (
    "CREATE CONSTRAINT note_id IF NOT EXISTS FOR (n:Note) REQUIRE n.id IS UNIQUE"
)
CREATE_NOTE_SCOPE_INDEX: Final = "CREATE INDEX note_scope IF NOT EXISTS FOR (n:Note) ON (n.project, n.user)"
# The analyzer is named rather than left to the server's default (a setting): search_text
# is already lower-case words, and no stop words are dropped at index time.
CREATE_NOTE_FULLTEXT_INDEX: Final = f"""CREATE FULLTEXT INDEX {FULLTEXT_INDEX} IF NOT EXISTS
FOR (n:Note) ON EACH [n.search_text]
OPTIONS {{indexConfig: {{`fulltext.analyzer`: 'standard-no-stop-words'}}}}"""
# A new full-text index is populated in the background; a search before it is online fails.
AWAIT_INDEXES: Final = "CALL db.awaitIndexes($timeout_s)"

SCHEMA: Final = (
    CREATE_NOTE_ID_CONSTRAINT,
    CREATE_NOTE_SCOPE_INDEX,
    CREATE_NOTE_FULLTEXT_INDEX,
    AWAIT_INDEXES,
)
"""Run in order by ``open()``; each statement is idempotent."""

# -- notes ---------------------------------------------------------------------------------------

# MERGE on the globally unique id; a note of another scope makes the WITH drop the row,
# so nothing is written and no row comes back (the backend reports the conflict).
UPSERT_NOTE: Final = """MERGE (n:Note {id: $id})
ON CREATE SET n.project = $project, n.user = $user
WITH n WHERE n.project = $project AND n.user = $user
SET n.content = $content, n.type = $type, n.tags = $tags, n.importance = $importance,
    n.thread_id = $thread_id, n.created = $created, n.modified = $modified,
    n.valid_from = $valid_from, n.valid_to = $valid_to, n.search_text = $search_text
RETURN n.id AS id"""

GET_NOTES: Final = f"""MATCH (n:Note)
WHERE n.id IN $ids AND n.project = $project AND n.user = $user
RETURN n {_NOTE_MAP} AS note"""

DELETE_NOTE: Final = """MATCH (n:Note {id: $id})
WHERE n.project = $project AND n.user = $user
DETACH DELETE n
RETURN count(n) AS deleted"""

LIST_NOTES: Final = f"""MATCH (n:Note)
WHERE {_NOTE_FILTER}
RETURN n {_NOTE_MAP} AS note
ORDER BY n.created DESC, n.id DESC
SKIP $offset LIMIT $limit"""

COUNT_NOTES: Final = f"""MATCH (n:Note)
WHERE {_NOTE_FILTER}
RETURN count(n) AS total"""

# $query is built by the backend from words only, each quoted, OR-ed: no Lucene operator
# of the user's text survives. The index spans every scope, so the scope filter follows.
SEARCH_NOTES: Final = f"""CALL db.index.fulltext.queryNodes('{FULLTEXT_INDEX}', $query) YIELD node, score
WITH node AS n, score
WHERE {_NOTE_FILTER}
RETURN n {_NOTE_MAP} AS note, score
ORDER BY score DESC, n.created DESC, n.id
LIMIT $limit"""

# -- links ---------------------------------------------------------------------------------------


def _upsert_link(rel_type: str) -> str:
    return f"""MATCH (a:Note {{id: $from_id}}) WHERE a.project = $project AND a.user = $user
MATCH (b:Note {{id: $to_id}}) WHERE b.project = $project AND b.user = $user
MERGE (a)-[r:{rel_type}]->(b)
ON CREATE SET r.created = $created
SET r.strength = $strength, r.valid_from = $valid_from, r.valid_to = $valid_to
RETURN a.id AS from_id, b.id AS to_id, type(r) AS rel_type, r.strength AS strength,
       r.created AS created, r.valid_from AS valid_from, r.valid_to AS valid_to"""


UPSERT_LINK: Final[MappingProxyType[Relation, str]] = MappingProxyType(
    {relation: _upsert_link(rel_type) for relation, rel_type in REL_TYPES.items()}
)
"""Create or update the link of one relation; keeps ``created`` of an existing link.

No row back means an endpoint is not a note of the scope.
"""

DELETE_LINK: Final = """MATCH (a:Note {id: $from_id})-[r]->(b:Note {id: $to_id})
WHERE a.project = $project AND a.user = $user AND b.project = $project AND b.user = $user
  AND type(r) = $rel_type
DELETE r
RETURN count(r) AS deleted"""

# -- traversal -------------------------------------------------------------------------------------


def _expand(pattern: str) -> str:
    return f"""UNWIND $frontier AS from_id
MATCH {pattern}
WHERE a.id = from_id AND a.project = $project AND a.user = $user
  AND b.project = $project AND b.user = $user
  AND ($rel_types IS NULL OR type(r) IN $rel_types)
  AND ($valid_at IS NULL OR ({_valid("r")} AND {_valid("b")}))
RETURN DISTINCT b {_NOTE_MAP} AS note"""


# One hop of the walk from the notes $frontier: the notes reached over links passing the filters.
EXPAND_OUT: Final = _expand("(a:Note)-[r]->(b:Note)")
EXPAND_IN: Final = _expand("(a:Note)<-[r]-(b:Note)")
EXPAND_BOTH: Final = _expand("(a:Note)-[r]-(b:Note)")

LINKS_AMONG: Final = f"""MATCH (a:Note)-[r]->(b:Note)
WHERE a.id IN $ids AND b.id IN $ids
  AND a.project = $project AND a.user = $user AND b.project = $project AND b.user = $user
  AND ($rel_types IS NULL OR type(r) IN $rel_types)
  AND ($valid_at IS NULL OR ({_valid("r")}))
RETURN a.id AS from_id, b.id AS to_id, type(r) AS rel_type, r.strength AS strength,
       r.created AS created, r.valid_from AS valid_from, r.valid_to AS valid_to"""
"""The links between the notes ``$ids`` (passing the filters): what a neighbourhood returns."""

# -- export --------------------------------------------------------------------------------------

# Ordered by the relation's value, not its type: the upper-case types sort alike here,
# but the contract promises the lower-case order the SQLite store gives.
LIST_LINKS: Final = """MATCH (a:Note)-[r]->(b:Note)
WHERE a.project = $project AND a.user = $user AND b.project = $project AND b.user = $user
WITH a, b, r, toLower(type(r)) AS relation
RETURN a.id AS from_id, b.id AS to_id, type(r) AS rel_type, r.strength AS strength,
       r.created AS created, r.valid_from AS valid_from, r.valid_to AS valid_to
ORDER BY from_id, to_id, relation
SKIP $offset LIMIT $limit"""
"""A page of the links of a scope in a stable order: what an export walks through."""

# The only statement without a scope filter: it names the scopes, and returns no content.
MOVE_SCOPE: Final = """MATCH (n:Note)
WHERE n.project = $project AND n.user = $user
SET n.project = $to_project
RETURN count(n) AS moved"""
"""Every note of a scope to another project; links join notes, so they follow."""

SCOPES: Final = """MATCH (n:Note)
RETURN DISTINCT n.project AS project, n.user AS user
ORDER BY project, user"""

# -- ArcadeDB ------------------------------------------------------------------------------------

# ArcadeDB's Cypher cannot create a full-text index (only range indexes) and has no
# db.awaitIndexes, so its schema stops at the constraint and the scope index.
ARCADEDB_SCHEMA: Final = (CREATE_NOTE_ID_CONSTRAINT, CREATE_NOTE_SCOPE_INDEX)

# Without a full-text index, search scans the scope's notes and scores each by the query
# words ($terms) it contains: matched distinct words first, then their share of the note's
# words. search_text is already reduced to words joined by single spaces, so split() is
# an exact tokenizer. Valid Neo4j Cypher too (it is linted like the rest).
ARCADEDB_SEARCH_NOTES: Final = f"""MATCH (n:Note)
WHERE {_NOTE_FILTER}
WITH n, split(n.search_text, ' ') AS words
WITH n, words, size([term IN $terms WHERE term IN words]) AS matched
WHERE matched > 0
WITH n, matched, size([word IN words WHERE word IN $terms]) AS hits, size(words) AS length
RETURN n {_NOTE_MAP} AS note, matched + toFloat(hits) / (hits + length) AS score
ORDER BY score DESC, n.created DESC, n.id
LIMIT $limit"""

ARCADEDB_OVERRIDES: Final[MappingProxyType[str, str | tuple[str, ...]]] = MappingProxyType(
    {"SCHEMA": ARCADEDB_SCHEMA, "SEARCH_NOTES": ARCADEDB_SEARCH_NOTES}
)
"""Statement name -> the ArcadeDB text that replaces it; the backend picks by dialect."""


# -- parameters and records ---------------------------------------------------------------------


def lucene_query(terms: list[str]) -> str:
    """``$query`` of :data:`SEARCH_NOTES`: the words quoted and OR-ed (words hold no quote)."""
    return quoted_or(terms)


def note_params(note: Note) -> dict[str, Any]:
    """The parameters of :data:`UPSERT_NOTE`."""
    return {
        **note_fields(note),
        "tags": list(note.tags),
        "search_text": " ".join(WORD.findall(f"{note.content} {' '.join(note.tags)}".lower())),
    }


def note_from_map(data: Mapping[str, Any]) -> Note:
    """A note from the map projection the statements return as ``note``."""
    return note_from_fields(data, list(data["tags"] or []))


def filter_params(flt: NoteFilter) -> dict[str, Any]:
    """The parameters of the note filter shared by list, count and search."""
    return {
        "project": flt.scope.project,
        "user": flt.scope.user,
        "types": None if flt.types is None else [t.value for t in flt.types],
        "tags": flt.tags,
        "thread_id": flt.thread_id,
        "valid_at": fmt_time_opt(flt.valid_at),
    }


def link_params(link: Link) -> dict[str, Any]:
    """The parameters of :data:`UPSERT_LINK`."""
    return link_times(link)


def link_from_row(row: Mapping[str, Any], *, project: str, user: str) -> Link:
    """A link from a row with ``from_id, to_id, rel_type, strength, created, valid_from, valid_to``."""
    return Link(
        from_id=row["from_id"],
        to_id=row["to_id"],
        relation=RELATIONS_BY_TYPE[row["rel_type"]],
        strength=row["strength"],
        project=project,
        user=user,
        created=datetime.fromisoformat(row["created"]),
        valid_from=parse_time_opt(row["valid_from"]),
        valid_to=parse_time_opt(row["valid_to"]),
    )


def all_statements() -> dict[str, str]:
    """Every complete statement of this module by a readable name: what the linter checks.

    Collected from the module's public constants rather than listed by hand, so a new
    statement cannot be left out of the lint.
    """
    found: dict[str, str] = {}
    for name, value in globals().items():
        if name.startswith("_") or not name.isupper() or name in _NOT_STATEMENTS:
            continue
        if isinstance(value, str):
            found[name] = value
        elif isinstance(value, tuple):
            found.update({f"{name}[{i}]": text for i, text in enumerate(value)})
        elif isinstance(value, MappingProxyType):
            found.update({f"{name}[{key}]": text for key, text in value.items() if isinstance(text, str)})
    # A statement reachable under several names (SCHEMA[0] is CREATE_NOTE_ID_CONSTRAINT) once.
    unique: dict[str, str] = {}
    for name, text in found.items():
        if text not in unique.values():
            unique[name] = text
    return unique


_NOT_STATEMENTS = frozenset(
    {"LABEL", "FULLTEXT_INDEX", "REL_TYPES", "RELATIONS_BY_TYPE", "NOTE_PROPERTIES", "LINK_PROPERTIES"}
)
