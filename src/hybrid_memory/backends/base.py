"""The storage protocols. Nothing above ``backends/`` knows which database it talks to.

Every method that reads or writes takes a :class:`Scope` (directly or inside a
filter) and every implementation applies it, so no query can cross projects.
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Protocol

from hybrid_memory.models import domain

SearchResults = dict[str, list[domain.VectorHit]]
"""Hits of each search of a :meth:`VectorStore.search_many` call, by search name."""
RankedIds = dict[str, list[tuple[str, float]]]
"""Each search of a :meth:`VectorStore.search_ids` call as (memory id, score), best first, by search name."""


class VectorStore(Protocol):
    """Memories with a dense vector and a BM25 sparse vector each."""

    async def open(self, *, dimension: int, model: str) -> None:
        """Open or create the store for vectors of ``dimension`` made by ``model``.

        Raises ``ConflictError`` when the store was filled by another model or
        dimension, ``StoreLockedError`` when another process owns an embedded store,
        ``BackendUnavailableError`` when a server cannot be reached.
        """
        ...

    async def close(self) -> None: ...

    def in_use(self) -> AbstractContextManager[None]:
        """Held while a request is being served: the store's own background work (an embedded
        store's index build) waits for a quiet moment rather than holding the request up."""
        ...

    async def upsert(self, records: Sequence[domain.MemoryRecord]) -> None:
        """Insert or replace by ``memory.id``. Durable when it returns."""
        ...

    async def set_payload(self, scope: domain.Scope, memory_id: str, fields: dict[str, object]) -> bool:
        """Update some Memory fields of one memory; False when it does not exist in ``scope``.

        Values are validated as Memory fields (``InvalidInputError``); id, project and
        user cannot change; None clears a field. Vectors are kept: new text needs an upsert.
        """
        ...

    async def delete(self, scope: domain.Scope, ids: Sequence[str]) -> int:
        """Delete these ids where they belong to ``scope``; returns how many existed."""
        ...

    async def get(self, scope: domain.Scope, ids: Sequence[str]) -> list[domain.Memory]:
        """The memories among ``ids`` that exist in ``scope``, in no particular order."""
        ...

    async def search_dense(
        self, vector: Sequence[float], flt: domain.MemoryFilter, limit: int
    ) -> list[domain.VectorHit]:
        """Nearest neighbours by cosine similarity, best first."""
        ...

    async def search_sparse(
        self, vector: domain.SparseVector, flt: domain.MemoryFilter, limit: int, *, context: bool = False
    ) -> list[domain.VectorHit]:
        """Keyword matches by BM25 (IDF applied by the store), best first.

        ``context=True`` searches the record's ``sparse_context`` vector (its text with the
        message before it) instead of ``sparse``.
        """
        ...

    async def search_many(
        self, flt: domain.MemoryFilter, limit: int, searches: domain.Searches
    ) -> SearchResults:
        """The ``searches`` (``search_dense``, ``search_sparse``, ``search_sparse(context=True)``)
        as one round to the store, each ranked on its own, best first.

        Keys ``"dense"``, ``"keyword"``, ``"context"`` for the vectors ``searches`` gives; a memory found by
        several searches is the same ``Memory`` object in each list.
        """
        ...

    async def search_ids(self, flt: domain.MemoryFilter, limit: int, searches: domain.Searches) -> RankedIds:
        """``search_many`` without the memories: each search's (id, score) list, best first.

        For a caller that reads only some of the hits' memories (``scroll`` with ``ids``).
        """
        ...

    def cached(self, ids: Sequence[str]) -> dict[str, domain.Memory]:
        """The memories among ``ids`` (as ``search_ids`` returns them) this process holds decoded, by id:
        no call to the store. A store that keeps none returns ``{}``."""
        ...

    async def scroll(
        self, flt: domain.MemoryFilter, limit: int, offset: str | None = None
    ) -> tuple[list[domain.Memory], str | None]:
        """A page of memories in id order and the opaque offset of the next page (None at the end)."""
        ...

    async def count(self, flt: domain.MemoryFilter) -> int:
        """Exact number of memories passing ``flt``."""
        ...

    async def thread_counts(self, scope: domain.Scope, limit: int) -> dict[str, int]:
        """Number of memories per thread id in ``scope`` (largest first, at most ``limit``)."""
        ...

    async def dense_vectors(self, scope: domain.Scope, ids: Sequence[str]) -> dict[str, list[float]]:
        """The dense vectors of the memories among ``ids`` in ``scope``, by id (export with embeddings)."""
        ...

    async def scopes(self) -> list[domain.Scope]:
        """Every scope holding at least one memory, sorted by (project, user).

        The one read that is not confined to a scope: it names scopes, never returns
        their content (``hybrid-memory export --all-projects``).
        """
        ...


class GraphStore(Protocol):
    """Typed notes and typed links: the knowledge graph."""

    async def open(self) -> None:
        """Connect and create schema (tables, constraints, indexes) idempotently."""
        ...

    async def close(self) -> None: ...

    async def upsert_note(self, note: domain.Note) -> None:
        """Insert or replace every field of the note with this id.

        Raises ``ConflictError`` when the id belongs to another scope (ids are global).
        """
        ...

    async def get_notes(self, scope: domain.Scope, ids: Sequence[str]) -> list[domain.Note]:
        """The notes among ``ids`` that exist in ``scope``, in no particular order."""
        ...

    async def delete_note(self, scope: domain.Scope, note_id: str) -> bool:
        """Delete a note and every link touching it; False when it did not exist."""
        ...

    async def list_notes(self, flt: domain.NoteFilter, limit: int, offset: int = 0) -> list[domain.Note]:
        """Notes newest first (by ``created``)."""
        ...

    async def count_notes(self, flt: domain.NoteFilter) -> int: ...

    async def search_notes(self, text: str, flt: domain.NoteFilter, limit: int) -> list[domain.NoteHit]:
        """Keyword (full-text) search over note content and tags, best first.

        Any user text is accepted: operators of the underlying query language are
        neutralised, so ``"a OR (b"`` searches for those words. Words are OR-ed; English
        stopwords (Lucene's set) are dropped, and a query with no word left returns [].
        Scores are positive, higher is better; only their order is comparable across backends.
        """
        ...

    async def upsert_link(self, link: domain.Link) -> domain.Link:
        """Create a link, or update strength and validity of the one with the same (from, to, relation).

        Keeps the stored ``created``; returns what is stored. Raises ``NotFoundError`` naming
        the first endpoint (from, then to) not in the link's scope.
        """
        ...

    async def delete_link(
        self, scope: domain.Scope, from_id: str, to_id: str, relation: domain.Relation
    ) -> bool: ...

    async def list_links(self, scope: domain.Scope, limit: int, offset: int = 0) -> list[domain.Link]:
        """Links of ``scope`` ordered by (from_id, to_id, relation value): a stable order to page through."""
        ...

    async def scopes(self) -> list[domain.Scope]:
        """Every scope holding at least one note, sorted by (project, user).

        The one read that is not confined to a scope: it names scopes, never returns
        their content (``hybrid-memory export --all-projects``).
        """
        ...

    async def move_scope(self, scope: domain.Scope, project: str) -> int:
        """Move every note of ``scope``, with its links, to ``project`` (same user) in one transaction;
        returns how many notes moved. Ids stay: a note keeps its id and its links."""
        ...

    async def neighbourhood(self, scope: domain.Scope, walk: domain.Walk) -> domain.Neighbourhood:
        """Notes within ``walk.depth`` hops of ``walk.note_id`` (the start excluded) and the links among them.

        ``direction`` follows links out of, into, or either way from each note;
        ``relations`` limits which link types are walked; ``valid_at`` keeps only
        links and notes valid at that instant (an invalid note is not walked through).
        Each note once, at its smallest depth; at most ``limit`` notes, nearest first,
        then oldest ``created`` first. ``links``: every link passing the same filters whose
        both ends are among the start note and the returned notes. An unknown start note,
        ``depth < 1`` or ``relations=[]`` give an empty neighbourhood.
        """
        ...
