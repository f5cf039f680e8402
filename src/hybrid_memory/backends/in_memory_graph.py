"""A ``GraphStore`` held in Python dicts: the stand-in for SQLite and Neo4j in tests of logic.

It answers as the embedded SQLite store does and passes the same contract suite:
note ids are global, links live inside one scope and go with either endpoint, the
neighbourhood is a breadth-first walk (each note at its smallest depth, nearest then
oldest first), and keyword search is BM25 over content and tags with the query words
of :func:`_text.query_terms` (stop words dropped, operators plain words), folded like
SQLite's ``unicode61`` tokenizer (lower case, diacritics removed).

Nothing is persisted. :class:`GraphData` is the "disk": a store opened again over
the same ``GraphData`` sees the same notes and links.
"""

from __future__ import annotations

import math
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

import anyio.lowlevel

from hybrid_memory.backends._text import WORD, note_not_found, query_terms
from hybrid_memory.errors import ConflictError
from hybrid_memory.models import domain

# BM25's usual constants (SQLite's FTS5 and Lucene use the same).
K1 = 1.2
B = 0.75

LinkKey = tuple[str, str, str, str, domain.Relation]
"""(project, user, from_id, to_id, relation): a link's identity."""


@dataclass
class GraphData:
    """What an in-memory graph store holds; shared by the stores opened over it."""

    notes: dict[str, domain.Note] = field(default_factory=dict)
    links: dict[LinkKey, domain.Link] = field(default_factory=dict)


def _copy(note: domain.Note) -> domain.Note:
    return domain.Note.model_validate(note.model_dump())


def _key(link: domain.Link) -> LinkKey:
    return (link.project, link.user, link.from_id, link.to_id, link.relation)


def _in_scope(item: domain.Note | domain.Link, scope: domain.Scope) -> bool:
    return item.project == scope.project and item.user == scope.user


def _valid_at(item: domain.Note | domain.Link, at: datetime | None) -> bool:
    """``valid_from <= at < valid_to``, an open end where a bound is None; always when ``at`` is None."""
    if at is None:
        return True
    started = item.valid_from is None or item.valid_from <= at
    return started and (item.valid_to is None or item.valid_to > at)


def _passes(note: domain.Note, flt: domain.NoteFilter) -> bool:
    return (
        _in_scope(note, flt.scope)
        and (flt.types is None or note.type in flt.types)
        and (flt.tags is None or any(tag in flt.tags for tag in note.tags))
        and (flt.thread_id is None or note.thread_id == flt.thread_id)
        and _valid_at(note, flt.valid_at)
    )


def _fold(text: str) -> str:
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def _words(note: domain.Note) -> list[str]:
    return WORD.findall(_fold(" ".join([note.content, *note.tags])))


class InMemoryGraphStore:
    """The ``GraphStore`` protocol over a :class:`GraphData` (a fresh one when none is given)."""

    def __init__(self, data: GraphData | None = None) -> None:
        self._data = data if data is not None else GraphData()
        self._open = False

    async def open(self) -> None:
        self._open = True

    async def close(self) -> None:
        self._open = False

    async def _ready(self) -> None:
        # A checkpoint, as every real store call has one: concurrent callers interleave here.
        await anyio.lowlevel.checkpoint()
        if not self._open:
            raise RuntimeError("InMemoryGraphStore is not open; call open() first.")

    # -- notes ---------------------------------------------------------------------------------

    async def upsert_note(self, note: domain.Note) -> None:
        """Insert or replace every field; ``ConflictError`` when the id belongs to another scope."""
        await self._ready()
        existing = self._data.notes.get(note.id)
        if existing is not None and not _in_scope(
            existing, domain.Scope(project=note.project, user=note.user)
        ):
            raise ConflictError(
                f"Note id '{note.id}' is already used in another project or by another user; "
                "choose a different id."
            )
        self._data.notes[note.id] = _copy(note)

    async def get_notes(self, scope: domain.Scope, ids: Sequence[str]) -> list[domain.Note]:
        await self._ready()
        found = (self._data.notes.get(note_id) for note_id in dict.fromkeys(ids))
        return [_copy(note) for note in found if note is not None and _in_scope(note, scope)]

    async def delete_note(self, scope: domain.Scope, note_id: str) -> bool:
        """Delete a note and every link touching it; False when it did not exist in ``scope``."""
        await self._ready()
        note = self._data.notes.get(note_id)
        if note is None or not _in_scope(note, scope):
            return False
        del self._data.notes[note_id]
        for key, link in list(self._data.links.items()):
            if _in_scope(link, scope) and note_id in (link.from_id, link.to_id):
                del self._data.links[key]
        return True

    def _filtered(self, flt: domain.NoteFilter) -> list[domain.Note]:
        """Notes passing ``flt``, newest ``created`` first (ties: id descending)."""
        found = [note for note in self._data.notes.values() if _passes(note, flt)]
        return sorted(found, key=lambda n: (n.created, n.id), reverse=True)

    async def list_notes(self, flt: domain.NoteFilter, limit: int, offset: int = 0) -> list[domain.Note]:
        await self._ready()
        start = max(offset, 0)
        return [_copy(n) for n in self._filtered(flt)[start : start + max(limit, 0)]]

    async def count_notes(self, flt: domain.NoteFilter) -> int:
        await self._ready()
        return len(self._filtered(flt))

    async def search_notes(self, text: str, flt: domain.NoteFilter, limit: int) -> list[domain.NoteHit]:
        """BM25 over content and tags, statistics over every note stored (as a full-text index keeps them)."""
        await self._ready()
        terms = [_fold(term) for term in query_terms(text)]
        if not terms or limit <= 0:
            return []
        documents = {note_id: Counter(_words(note)) for note_id, note in self._data.notes.items()}
        total = len(documents)
        average = sum(sum(words.values()) for words in documents.values()) / max(total, 1)
        frequency = Counter(t for words in documents.values() for t in set(terms) if t in words)
        idf = {t: math.log(1 + (total - frequency[t] + 0.5) / (frequency[t] + 0.5)) for t in terms}
        hits: list[domain.NoteHit] = []
        for note in self._filtered(flt):
            words = documents[note.id]
            norm = K1 * (1 - B + B * sum(words.values()) / max(average, 1e-9))
            score = sum(idf[t] * words[t] * (K1 + 1) / (words[t] + norm) for t in set(terms) if t in words)
            if score > 0:
                hits.append(domain.NoteHit(note=_copy(note), score=score))
        # Equal scores: newest first, then by id, as SQLite orders them (stable sorts, last key first).
        hits.sort(key=lambda hit: hit.note.id)
        hits.sort(key=lambda hit: hit.note.created, reverse=True)
        return sorted(hits, key=lambda hit: -hit.score)[:limit]

    # -- links ---------------------------------------------------------------------------------

    async def upsert_link(self, link: domain.Link) -> domain.Link:
        """Create the link, or update strength and validity of the stored one, keeping its ``created``."""
        await self._ready()
        scope = domain.Scope(project=link.project, user=link.user)
        for note_id in (link.from_id, link.to_id):
            note = self._data.notes.get(note_id)
            if note is None or not _in_scope(note, scope):
                raise note_not_found(note_id)
        stored = self._data.links.get(_key(link))
        if stored is not None:
            link = link.model_copy(update={"created": stored.created})
        self._data.links[_key(link)] = domain.Link.model_validate(link.model_dump())
        return domain.Link.model_validate(link.model_dump())

    async def delete_link(
        self, scope: domain.Scope, from_id: str, to_id: str, relation: domain.Relation
    ) -> bool:
        await self._ready()
        return self._data.links.pop((scope.project, scope.user, from_id, to_id, relation), None) is not None

    def _scope_links(self, scope: domain.Scope) -> list[domain.Link]:
        """The links of ``scope`` by (from_id, to_id, relation value)."""
        found = (link for link in self._data.links.values() if _in_scope(link, scope))
        return sorted(found, key=lambda lk: (lk.from_id, lk.to_id, lk.relation.value))

    async def list_links(self, scope: domain.Scope, limit: int, offset: int = 0) -> list[domain.Link]:
        await self._ready()
        start = max(offset, 0)
        return [lk.model_copy() for lk in self._scope_links(scope)[start : start + max(limit, 0)]]

    async def scopes(self) -> list[domain.Scope]:
        await self._ready()
        found = {(note.project, note.user) for note in self._data.notes.values()}
        return [domain.Scope(project=project, user=user) for project, user in sorted(found)]

    async def move_scope(self, scope: domain.Scope, project: str) -> int:
        await self._ready()
        moved = [n for n in self._data.notes.values() if n.project == scope.project and n.user == scope.user]
        for note in moved:
            self._data.notes[note.id] = note.model_copy(update={"project": project})
        for link in self._scope_links(scope):
            del self._data.links[_key(link)]
            moved_link = link.model_copy(update={"project": project})
            self._data.links[_key(moved_link)] = moved_link
        return len(moved)

    async def neighbourhood(self, scope: domain.Scope, walk: domain.Walk) -> domain.Neighbourhood:
        """The notes and links around ``walk.note_id``; see ``GraphStore.neighbourhood``."""
        await self._ready()
        if walk.empty:
            return domain.Neighbourhood(notes=[], links=[])
        walkable = [
            lk
            for lk in self._scope_links(scope)
            if (walk.relations is None or lk.relation in walk.relations) and _valid_at(lk, walk.valid_at)
        ]
        reached = self._walk(scope, walk.note_id, walkable, walk.depth, walk.direction, walk.valid_at)
        nearest = sorted(reached, key=lambda i: (reached[i], self._data.notes[i].created, i))[: walk.limit]
        kept = {walk.note_id, *nearest}
        return domain.Neighbourhood(
            notes=[_copy(self._data.notes[i]) for i in nearest],
            links=[lk.model_copy() for lk in walkable if lk.from_id in kept and lk.to_id in kept],
        )

    def _walk(
        self,
        scope: domain.Scope,
        start: str,
        links: Iterable[domain.Link],
        depth: int,
        direction: domain.Direction,
        valid_at: datetime | None,
    ) -> dict[str, int]:
        """Each note reached from ``start`` (excluded) by ``links`` and its smallest depth."""
        steps: dict[str, list[str]] = {}
        for lk in links:
            if direction in (domain.Direction.OUT, domain.Direction.BOTH):
                steps.setdefault(lk.from_id, []).append(lk.to_id)
            if direction in (domain.Direction.IN, domain.Direction.BOTH):
                steps.setdefault(lk.to_id, []).append(lk.from_id)
        reached: dict[str, int] = {}
        frontier = [start]
        for level in range(1, depth + 1):
            following: list[str] = []
            for current in frontier:
                for nxt in steps.get(current, []):
                    note = self._data.notes.get(nxt)
                    if nxt == start or nxt in reached or note is None:
                        continue
                    if not (_in_scope(note, scope) and _valid_at(note, valid_at)):
                        continue
                    reached[nxt] = level
                    following.append(nxt)
            frontier = following
        return reached
