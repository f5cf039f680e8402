"""``hybrid-memory export``: the configured stores' memories, notes and links as one file.

The vector store is opened with the model that filled it (read from the store, not
from the settings), so a user can export with the old model configured or not, and
import under a new one. The file appears whole or not at all: it is written beside
the target and renamed into place at the end.

Private items (``private=True``) never leave: they are skipped and counted, and so are
a private note's links and its searchable copy. A note's privacy lives on its searchable
copy in the vector store (the graph keeps no flag), so the private notes of a scope are
read from there before its notes are written.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import IO

import anyio
from pydantic import BaseModel

from hybrid_memory.backends import open_graph_store, open_vector_store
from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.backends.identity import stored_embedding
from hybrid_memory.embeddings import build_embedder
from hybrid_memory.models import Link, MemoryFilter, MemoryKind, Note, NoteFilter, Scope, utcnow
from hybrid_memory.service.stores import Stores
from hybrid_memory.settings import Settings
from hybrid_memory.transfer.format import EmbeddingInfo, Header, Item, header_line, item_line, kind_of
from hybrid_memory.transfer.progress import Progress

PAGE = 256


class ExportResult(BaseModel):
    """What an export wrote. ``counts`` keyed ``memory``, ``note``, ``link``."""

    file: str
    scopes: list[Scope]
    counts: dict[str, int]
    skipped_private: int
    embedding: EmbeddingInfo | None
    with_embeddings: bool


async def export_file(
    settings: Settings,
    path: Path,
    *,
    projects: Sequence[str] = (),
    all_projects: bool = False,
    with_embeddings: bool = False,
    progress: Progress | None = None,
    opened: Stores | None = None,
) -> ExportResult:
    """Export the configured project (or ``projects``, or every scope) to ``path``.

    ``opened``: stores a running server already holds (it opened them with the model that
    filled them, or it would not be running), used instead of opening them here.
    """
    progress = progress or Progress.disabled()
    embedding = await _source_embedding(settings)
    partial = path.with_name(f".{path.name}.partial")
    async with _stores(settings, embedding, opened) as (vectors, graph):
        if all_projects:
            found = set(await graph.scopes()) | set(await vectors.scopes() if vectors else [])
            scopes = sorted(found, key=lambda s: (s.project, s.user))
        else:
            names = list(dict.fromkeys(projects)) or [settings.project or "default"]
            scopes = [Scope(project=name, user=settings.user) for name in names]
        writer = _Writer(vectors, graph, progress, with_embeddings=with_embeddings)
        try:
            with partial.open("w", encoding="utf-8") as body:
                for scope in scopes:
                    await writer.scope(scope, body)
            progress.finish()
            header = Header(
                format="mcp-hybrid-memory",
                version=1,
                exported_at=utcnow(),
                embedding=embedding,
                scopes=scopes,
                counts={**writer.counts, "private_skipped": writer.skipped},
            )
            # Off the event loop: in a running server, other sessions go on while a large file is copied.
            await anyio.to_thread.run_sync(_assemble, path, header, partial)
        finally:
            with contextlib.suppress(FileNotFoundError):
                partial.unlink()
    return ExportResult(
        file=str(path),
        scopes=scopes,
        counts=writer.counts,
        skipped_private=writer.skipped,
        embedding=embedding,
        with_embeddings=with_embeddings and embedding is not None,
    )


async def _source_embedding(settings: Settings) -> EmbeddingInfo | None:
    """The model and dimension the vector store was filled with; None when there is no store."""
    stored = await stored_embedding(settings)
    if stored is None:
        return None
    if stored.model is not None and stored.dimension:
        return EmbeddingInfo(model=stored.model, dimension=stored.dimension)
    # Nothing recorded (a store older than the record): the configured model is the only
    # guess, and opening the store checks it against the stored vectors' size.
    configured = build_embedder(settings.embedding, cache_dir=settings.data_dir / "models")
    try:
        return EmbeddingInfo(model=configured.model_name, dimension=stored.dimension or configured.dimension)
    finally:
        await configured.close()


@asynccontextmanager
async def _stores(
    settings: Settings, embedding: EmbeddingInfo | None, opened: Stores | None
) -> AsyncIterator[tuple[VectorStore | None, GraphStore]]:
    if opened is not None:
        # As below: no vector store recorded, no memories to export.
        yield (opened.vectors if embedding is not None else None), opened.graph
        return
    async with open_graph_store(settings) as graph:
        if embedding is None:
            yield None, graph
            return
        dimension, model = embedding.dimension, embedding.model
        async with open_vector_store(settings, dimension=dimension, model=model) as vectors:
            yield vectors, graph


def _assemble(path: Path, header: Header, body_path: Path) -> None:
    """Header, then the body, into a temporary file renamed over ``path``: whole or nothing."""
    tmp = path.with_name(f".{path.name}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as out, body_path.open(encoding="utf-8") as body:
            out.write(header_line(header) + "\n")
            shutil.copyfileobj(body, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


class ScopeReader:
    """Reads one scope's items as they leave the machine: notes, then links, then memories, each
    private item (and a private note's links and searchable copy) left out and counted."""

    def __init__(
        self, vectors: VectorStore | None, graph: GraphStore, progress: Progress, *, with_embeddings: bool
    ) -> None:
        self._vectors = vectors
        self._graph = graph
        self._progress = progress
        self._with_embeddings = with_embeddings
        self.skipped = 0

    async def items(self, scope: Scope) -> AsyncIterator[tuple[Item, list[float] | None]]:
        """Every shareable item of ``scope`` (with a memory's dense vector when asked for)."""
        private_notes = await self._private_notes(scope)
        async for note in self._notes(scope, private_notes):
            yield note, None
        async for link in self._links(scope, private_notes):
            yield link, None
        if self._vectors is not None:
            async for entry in self._memories(self._vectors, scope, private_notes):
                yield entry

    async def _private_notes(self, scope: Scope) -> set[str]:
        """The ids of the scope's private notes, from their searchable copies."""
        if self._vectors is None:
            return set()
        flt = MemoryFilter(scope=scope, kinds=[MemoryKind.NOTE], private=True)
        found: set[str] = set()
        offset: str | None = None
        while True:
            page, offset = await self._vectors.scroll(flt, PAGE, offset)
            found.update(m.id for m in page)
            if offset is None:
                return found

    async def _notes(self, scope: Scope, private: set[str]) -> AsyncIterator[Note]:
        flt = NoteFilter(scope=scope)
        self._progress.start(f"{scope.project}: notes", await self._graph.count_notes(flt))
        offset = 0
        while page := await self._graph.list_notes(flt, PAGE, offset):
            offset += len(page)
            for note in page:
                if note.id in private:
                    self.skipped += 1
                else:
                    yield note
            self._progress.advance(len(page))

    async def _links(self, scope: Scope, private_notes: set[str]) -> AsyncIterator[Link]:
        self._progress.start(f"{scope.project}: links", None)
        offset = 0
        while page := await self._graph.list_links(scope, PAGE, offset):
            offset += len(page)
            for link in page:
                if link.from_id in private_notes or link.to_id in private_notes:
                    self.skipped += 1
                else:
                    yield link
            self._progress.advance(len(page))

    async def _memories(
        self, vectors: VectorStore, scope: Scope, private_notes: set[str]
    ) -> AsyncIterator[tuple[Item, list[float] | None]]:
        flt = MemoryFilter(scope=scope)
        self._progress.start(f"{scope.project}: memories", await vectors.count(flt))
        offset: str | None = None
        while True:
            page, offset = await vectors.scroll(flt, PAGE, offset)
            # Filtered here, not by the store: a memory stored before the private flag
            # existed has no flag in its payload, and a store filter would drop it.
            kept = [m for m in page if not m.private and m.id not in private_notes]
            self.skipped += len(page) - len(kept)
            dense = await vectors.dense_vectors(scope, [m.id for m in kept]) if self._with_embeddings else {}
            for memory in kept:
                yield memory, dense.get(memory.id)
            self._progress.advance(len(page))
            if offset is None:
                return


class _Writer:
    """Writes one scope at a time, as :class:`ScopeReader` reads it, counting items by kind."""

    def __init__(
        self, vectors: VectorStore | None, graph: GraphStore, progress: Progress, *, with_embeddings: bool
    ) -> None:
        self._reader = ScopeReader(vectors, graph, progress, with_embeddings=with_embeddings)
        self.counts = {"memory": 0, "note": 0, "link": 0}

    @property
    def skipped(self) -> int:
        return self._reader.skipped

    async def scope(self, scope: Scope, out: IO[str]) -> None:
        async for item, embedding in self._reader.items(scope):
            out.write(item_line(item, embedding) + "\n")
            self.counts[kind_of(item)] += 1
