"""``hybrid-memory import``: write a validated file into the configured stores, idempotently.

Nothing is written until the whole file has been read and found valid (see
:mod:`~hybrid_memory.transfer.plan`), including the notes that links need from the
target store. Then memories and notes go first, in batches, and links last, so every
link finds its notes. Items equal to what is stored are skipped (and not re-embedded),
so importing a file twice changes nothing the second time.

Memories are indexed by the server's own :class:`~hybrid_memory.service.indexer.Indexer`,
so a thread message gets its context (the tail of the memory its ``prev_id`` names)
as it did when it was remembered. A memory keeps the file's embedding when the file
was made with the configured model and dimension; otherwise it is embedded again, and
its ``tokens`` recounted when the model differs. A note the file brings without its
searchable copy in the vector store (every note of a ``memory.jsonl``) is indexed by
:meth:`MemoryService.repair`.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from pydantic import BaseModel, Field

from hybrid_memory.backends import open_graph_store, open_vector_store
from hybrid_memory.backends.base import GraphStore
from hybrid_memory.embeddings import build_embedder
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.errors import BackendError
from hybrid_memory.models import Link, Memory, Note, Scope
from hybrid_memory.service import MemoryService
from hybrid_memory.service.indexer import context_tail
from hybrid_memory.service.stores import Stores
from hybrid_memory.settings import Settings
from hybrid_memory.transfer.format import MAX_PROBLEMS, ImportFileError, Item, kind_of, scope_of
from hybrid_memory.transfer.plan import ImportPlan, SourceFormat, read_plan, redacted
from hybrid_memory.transfer.progress import Progress

logger = logging.getLogger(__name__)

BATCH = 256
"""Memories embedded and written per call: large enough for the model, small enough to show progress."""

LinkKey = tuple[str, str, str]


class ImportResult(BaseModel):
    """What an import read and wrote. Counts are keyed ``memory``, ``note``, ``link``."""

    file: str
    format: SourceFormat
    dry_run: bool
    scopes: list[Scope]
    in_file: dict[str, int]
    written: dict[str, int] = Field(default_factory=lambda: {"memory": 0, "note": 0, "link": 0})
    unchanged: dict[str, int] = Field(default_factory=lambda: {"memory": 0, "note": 0, "link": 0})
    embedded: int = 0
    """Memories embedded by the configured model (the file had no usable vector for them)."""
    indexed_notes: int = 0
    """Notes given their searchable copy in the vector store."""


async def import_file(
    settings: Settings,
    path: Path,
    *,
    source: SourceFormat | None = None,
    dry_run: bool = False,
    embedder: Embedder | None = None,
    progress: Progress | None = None,
    opened: MemoryService | None = None,
) -> ImportResult:
    """Import ``path`` (our export format or a ``memory.jsonl``) into the configured stores.

    A ``memory.jsonl`` goes to the configured project and user. Raises ``ImportFileError``
    (nothing written) when the file is not valid. ``opened``: the service of a running
    server, whose stores and model are used instead of opening them here.
    """
    progress = progress or Progress.disabled()
    scope = Scope(project=settings.project or "default", user=settings.user)
    # Off the event loop: in a running server, other sessions go on while a large file is read.
    plan = await anyio.to_thread.run_sync(read_plan, path, source, scope)
    result = ImportResult(
        file=str(path), format=plan.source, dry_run=dry_run, scopes=plan.scopes, in_file=plan.counts
    )
    if plan.outside:
        if opened is not None:
            await _check_outside(path, plan, opened.stores.graph)
        else:
            async with open_graph_store(settings) as graph:
                await _check_outside(path, plan, graph)
    if dry_run:
        return result
    try:
        if opened is not None:
            await _write(plan, opened, result, progress)
            return result
        owned = embedder is None
        if embedder is None:
            embedder = build_embedder(settings.embedding, cache_dir=settings.data_dir / "models")
        try:
            dimension = await _dimension(embedder)
            async with (
                open_vector_store(settings, dimension=dimension, model=embedder.model_name) as vectors,
                open_graph_store(settings) as graph,
            ):
                service = MemoryService(settings=settings, vectors=vectors, graph=graph, embedder=embedder)
                await _write(plan, service, result, progress)
        finally:
            if owned:
                await embedder.close()
    finally:
        progress.finish()
    return result


async def write_items(service: MemoryService, items: Sequence[Item], progress: Progress) -> ImportResult:
    """Write ``items`` (already read and checked, links' notes held) as an import writes a file's:
    redacted again, an item equal to the stored one skipped, memories embedded by the service's model."""
    scopes = sorted({scope_of(i) for i in items}, key=lambda s: (s.project, s.user))
    counts = {"memory": 0, "note": 0, "link": 0}
    for item in items:
        counts[kind_of(item)] += 1
    plan = ImportPlan(
        "hybrid-memory", None, scopes, counts, lambda: map(redacted, ((i, None) for i in items))
    )
    result = ImportResult(file="", format=plan.source, dry_run=False, scopes=scopes, in_file=counts)
    await _write(plan, service, result, progress)
    return result


async def _write(plan: ImportPlan, service: MemoryService, result: ImportResult, progress: Progress) -> None:
    stores = service.stores
    dimension = await _dimension(stores.embedder)
    same_model = plan.embedding is not None and (plan.embedding.model, plan.embedding.dimension) == (
        stores.embedder.model_name,
        dimension,
    )
    writer = _Writer(stores, result, progress, reuse=same_model)
    # Recount tokens only when another model made the file: the count is the model's own.
    writer.recount = plan.embedding is not None and not same_model
    await writer.write(plan)
    for target in plan.scopes:
        result.indexed_notes += await service.repair(target)


async def _dimension(embedder: Embedder) -> int:
    try:
        return embedder.dimension
    except BackendError:
        # An OpenAI-compatible model of unknown size: one probe call tells it.
        await embedder.warm_up()
        return embedder.dimension


async def _check_outside(path: Path, plan: ImportPlan, graph: GraphStore) -> None:
    """Links may join notes already in the target store; each must be there, in the link's scope."""
    wanted: dict[Scope, list[str]] = {}
    for target, note_id in plan.outside:
        wanted.setdefault(target, []).append(note_id)
    missing: list[tuple[int, str]] = []
    for target, ids in wanted.items():
        found = {note.id for note in await graph.get_notes(target, ids)}
        for note_id in ids:
            if note_id not in found:
                line = plan.outside[(target, note_id)]
                missing.append(
                    (
                        line,
                        f"line {line}: link needs note {note_id}, which is neither in the file nor "
                        f"in project {target.project!r} (user {target.user!r}) of the target",
                    )
                )
    if missing:
        missing.sort()
        problems = [text for _, text in missing[:MAX_PROBLEMS]]
        raise ImportFileError(path, problems, len(missing) - len(problems))


@dataclass
class _Writer:
    """Writes a plan's items in batches, skipping those already stored as they are."""

    stores: Stores
    result: ImportResult
    progress: Progress
    reuse: bool
    recount: bool = False
    _tails: dict[str, str] = field(init=False, default_factory=dict)
    """Context tails of the file's memories that another one follows (its ``prev_id``)."""
    _links: dict[Scope, dict[LinkKey, Link]] = field(init=False, default_factory=dict)

    async def write(self, plan: ImportPlan) -> None:
        # The previous memory of a message may come later in the file: their tails first.
        self._tails = {
            item.id: context_tail(item.text)
            for item, _ in plan.entries()
            if isinstance(item, Memory) and item.next_id is not None
        }
        self.progress.start("importing", plan.total)
        memories: list[tuple[Memory, list[float] | None]] = []
        notes: list[Note] = []
        for item, embedding in plan.entries():
            if isinstance(item, Memory):
                memories.append((item, embedding))
                if len(memories) >= BATCH:
                    await self._memories(memories)
                    memories = []
            elif isinstance(item, Note):
                notes.append(item)
                if len(notes) >= BATCH:
                    await self._notes(notes)
                    notes = []
        await self._memories(memories)
        await self._notes(notes)
        # Links last, in a second reading, so that every note they join is stored.
        for item, _ in plan.entries():
            if isinstance(item, Link):
                await self._link(item)
        self.progress.finish()

    def _count(self, kind: str, *, written: bool, n: int = 1) -> None:
        (self.result.written if written else self.result.unchanged)[kind] += n
        self.progress.advance(n)

    async def _memories(self, batch: Sequence[tuple[Memory, list[float] | None]]) -> None:
        if not batch:
            return
        if self.recount:
            count = self.stores.embedder.count_tokens
            batch = [(m.model_copy(update={"tokens": count(m.text)}), e) for m, e in batch]
        existing: dict[str, Memory] = {}
        for target in {scope_of(m) for m, _ in batch}:
            ids = [m.id for m, _ in batch if scope_of(m) == target]
            existing.update((m.id, m) for m in await self.stores.vectors.get(target, ids))
        changed = [(m, e) for m, e in batch if existing.get(m.id) != m]
        self._count("memory", written=False, n=len(batch) - len(changed))
        if not changed:
            return
        dense = [e if self.reuse else None for _, e in changed]
        await self.stores.indexer.store([m for m, _ in changed], dense=dense, known=self._tails)
        self.result.embedded += sum(1 for d in dense if d is None)
        self._count("memory", written=True, n=len(changed))

    async def _notes(self, batch: Sequence[Note]) -> None:
        existing: dict[str, Note] = {}
        for target in {scope_of(n) for n in batch}:
            ids = [n.id for n in batch if scope_of(n) == target]
            existing.update((n.id, n) for n in await self.stores.graph.get_notes(target, ids))
        for note in batch:
            if existing.get(note.id) == note:
                self._count("note", written=False)
            else:
                await self.stores.graph.upsert_note(note)
                self._count("note", written=True)

    async def _link(self, link: Link) -> None:
        target = scope_of(link)
        if target not in self._links:
            self._links[target] = await _all_links(self.stores.graph, target)
        key = (link.from_id, link.to_id, link.relation.value)
        stored = self._links[target].get(key)
        # upsert_link keeps a stored link's created, so only the other fields can differ.
        if stored is not None and stored == link.model_copy(update={"created": stored.created}):
            self._count("link", written=False)
            return
        self._links[target][key] = await self.stores.graph.upsert_link(link)
        self._count("link", written=True)


async def _all_links(graph: GraphStore, scope: Scope) -> dict[LinkKey, Link]:
    found: dict[LinkKey, Link] = {}
    offset = 0
    while True:
        page = await graph.list_links(scope, 1000, offset)
        found.update(((k.from_id, k.to_id, k.relation.value), k) for k in page)
        if len(page) < 1000:
            return found
        offset += len(page)
