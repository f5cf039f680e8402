"""MemoryService: the use cases, over the storage protocols and the embedder.

Sources of truth: the vector store owns conversation memories; the graph store
owns notes and links, and the vector store keeps a searchable copy of each note
under the note's id (:mod:`hybrid_memory.service.writes.notes`, whose ``repair`` runs at
start-up). Recall never returns a note memory whose graph note is gone: such
orphans are dropped from results and deleted on repair.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from contextlib import AbstractContextManager
from dataclasses import replace

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.errors import NotFoundError
from hybrid_memory.models import (
    CleanupResult,
    ForgetPreview,
    ForgetResult,
    Link,
    Memory,
    MemoryContext,
    MemoryFilter,
    MemoryStats,
    Neighbourhood,
    NoteResult,
    PinResult,
    RecallResult,
    Relation,
    RememberResult,
    Scope,
    TaskResult,
    ThreadList,
    Walk,
)
from hybrid_memory.service import browse
from hybrid_memory.service.knowledge.service import Knowledge
from hybrid_memory.service.lifecycle.eviction_summary import build_summarizer
from hybrid_memory.service.lifecycle.forgetting import forget, forget_project
from hybrid_memory.service.lifecycle.lifecycle import Lifecycle, Summarizer, SummaryRequest
from hybrid_memory.service.lifecycle.retention import LiveVectors
from hybrid_memory.service.recall import Recaller, RecallOptions
from hybrid_memory.service.recall.context import ContextBuilder
from hybrid_memory.service.stores import Stores
from hybrid_memory.service.writes import validation
from hybrid_memory.service.writes.drafts import DryRun, NoteDraft, NoteUpdate, TaskDraft, ThreadDraft
from hybrid_memory.service.writes.notes import NotePlan, Notes, no_note
from hybrid_memory.service.writes.tasks import TaskPlan, task_memory
from hybrid_memory.service.writes.threads import ThreadPlan, Threads
from hybrid_memory.settings import Settings

logger = logging.getLogger(__name__)


class MemoryService:
    """Every use case of the memory server. Tools call this; it never imports ``mcp``."""

    def __init__(
        self,
        *,
        settings: Settings,
        vectors: VectorStore,
        graph: GraphStore,
        embedder: Embedder,
        sparse: Bm25Encoder | None = None,
    ) -> None:
        self._settings = settings
        self._stores = stores = Stores.over(vectors, graph, embedder, sparse)
        # Reads see only what has not expired; writes, repair and cleanup see the store itself.
        self._live = LiveVectors(vectors, settings.lifecycle.retention_days)
        # Recall reads through the live view: what retention has expired is never returned.
        self._recaller = Recaller(settings=settings, stores=replace(stores, vectors=self._live))
        self._lifecycle = Lifecycle(
            settings=settings.lifecycle, stores=stores, summarizer=build_summarizer(settings.lifecycle)
        )
        self._threads = Threads(settings=settings, stores=stores, lifecycle=self._lifecycle)
        self._notes = Notes(
            stores=stores, lifecycle=self._lifecycle, max_content_chars=settings.max_content_chars
        )
        self._context = ContextBuilder(
            vectors=self._live, graph=stores.graph, embedder=embedder, recall=self._recaller.recall
        )
        self.knowledge = Knowledge(settings.lifecycle, stores)

    # --- threads ---------------------------------------------------------------------

    def in_use(self) -> AbstractContextManager[None]:
        """Hold while serving a request: the stores' background work waits for a quiet moment."""
        return self._stores.vectors.in_use()

    async def plan_thread(self, scope: Scope, draft: ThreadDraft) -> DryRun[ThreadPlan]:
        """Dry run of remember_thread: its prepared memories and what its eviction would summarise."""
        plan = self._threads.prepare(scope, draft)
        if not self._lifecycle.summarizes:
            return DryRun(plan, None)
        adding = await self._threads.changed(scope, plan)
        return DryRun(plan, await self._lifecycle.summary_request(scope, adding) if adding else None)

    async def remember_thread(
        self,
        scope: Scope,
        thread: ThreadDraft | ThreadPlan,
        *,
        summarizer: Summarizer | None = None,
        harvest: bool = False,
    ) -> RememberResult:
        """Store a thread's user and assistant messages, chunked, secrets redacted; idempotent per message.

        ``harvest`` (a captured session): also the notes, entities and links its turns state, and its digest.
        """
        plan = self._threads.prepare(scope, thread) if isinstance(thread, ThreadDraft) else thread
        result = await self._threads.remember(scope, plan, summarizer)
        if harvest:
            await self.knowledge.harvest(scope, self, result)
        else:
            await self.knowledge.thread_grew(scope, result)
        return result

    async def list_threads(self, scope: Scope, limit: int, offset: int = 0) -> ThreadList:
        return await self._threads.list(scope, limit, offset)

    # --- notes and links (service/writes/notes.py) -------------------------------------------

    async def plan_note(self, scope: Scope, draft: NoteDraft) -> DryRun[NotePlan]:
        """Dry run of create_note: the embedded note and what its eviction would summarise."""
        plan = await self._notes.prepare(scope, draft)
        if not self._lifecycle.summarizes:
            return DryRun(plan, None)
        memory = await self._notes.pending(scope, plan)
        return DryRun(
            plan, None if memory is None else await self._lifecycle.summary_request(scope, [memory])
        )

    async def create_note(
        self, scope: Scope, note: NoteDraft | NotePlan, *, summarizer: Summarizer | None = None
    ) -> NoteResult:
        """A note in the graph and its searchable copy; a live near-duplicate is returned instead."""
        plan = await self._notes.prepare(scope, note) if isinstance(note, NoteDraft) else note
        return await self._notes.create(scope, plan, summarizer)

    async def update_note(self, scope: Scope, note_id: str, change: NoteUpdate) -> NoteResult:
        """Change a note's content, type, tags or importance; its pin, privacy and expiry stay."""
        return await self._notes.update(scope, note_id, change)

    async def create_link(
        self, scope: Scope, *, from_id: str, to_id: str, relation: Relation, strength: float = 1.0
    ) -> Link:
        """A typed link; ``contradicts`` / ``supersedes`` close the older note's validity."""
        return await self._notes.link(
            scope, from_id=from_id, to_id=to_id, relation=relation, strength=strength
        )

    async def linked_notes(self, scope: Scope, walk: Walk) -> Neighbourhood:
        """The start note and its neighbourhood within ``walk.depth`` links."""
        hood = await self._live.live_neighbourhood(scope, await self._notes.linked(scope, walk))
        if not hood.notes or hood.notes[0].id != walk.note_id:
            raise no_note(walk.note_id)  # expired: gone for every reader, as an unknown id is
        return hood

    # --- forgetting and the lifecycle -------------------------------------------------------

    async def forget(
        self, scope: Scope, *, ids: Sequence[str] = (), thread_id: str | None = None
    ) -> ForgetResult:
        """Delete memories or notes by id, or a whole thread's messages."""
        thread_id = _stored_thread_id(thread_id)
        return await forget(self._stores.vectors, self._stores.graph, scope, ids=ids, thread_id=thread_id)

    async def forget_project(self, scope: Scope) -> ForgetResult:
        """Delete everything the scope's project holds: its memories, notes and links."""
        return await forget_project(self._stores.vectors, self._stores.graph, scope)

    async def pin(self, scope: Scope, memory_id: str, pinned: bool) -> PinResult:
        """Pin a memory or note into core memory (never evicted, always in context), or unpin it."""
        return await self._lifecycle.pin(scope, memory_id, pinned)

    async def forget_preview(self, scope: Scope, limit: int, cursor: str | None = None) -> ForgetPreview:
        """What :meth:`cleanup` would remove now, a page at a time; changes nothing."""
        return await self._lifecycle.preview(scope, limit, cursor)

    async def cleanup(self, scope: Scope, summarizer: Summarizer | None = None) -> CleanupResult:
        """Delete expired memories (retention), then evict what the limits require."""
        return await self._lifecycle.cleanup(scope, summarizer)

    async def cleanup_summary_request(self, scope: Scope) -> SummaryRequest | None:
        """What :meth:`cleanup` would have summarised now; None: no summary."""
        return await self._lifecycle.summary_request(scope)

    async def stats(self, scope: Scope) -> MemoryStats:
        """The project's memory statistics: counts by kind, pins, evictions, recall hit rate, limits."""
        return await self._lifecycle.stats(scope)

    async def read(self, scope: Scope, memory_id: str) -> Memory:
        """One memory or note by id (a note's searchable copy holds its whole content)."""
        found = await self._stores.vectors.get(scope, [memory_id])
        if not found:
            raise NotFoundError(
                f"No memory or note '{memory_id}' in this project. "
                "recall_memory returns the ids you can read."
            )
        return found[0]

    @property
    def stores(self) -> Stores:
        """The open stores and model, for applications that work on them directly (export, import)."""
        return self._stores

    @property
    def settings(self) -> Settings:
        return self._settings

    @property
    def embedder(self) -> Embedder:
        """The model, whose tokenizer also measures what the tools send back."""
        return self._stores.embedder

    # --- recall ----------------------------------------------------------------------------

    async def recall(
        self, scope: Scope, query: str, options: RecallOptions, *, record: bool = True
    ) -> RecallResult:
        """Hybrid recall: dense + keyword over memories, full text over notes, then their neighbours.

        ``record=False`` (a person browsing) leaves the hits' access counts and the hit rate alone.
        """
        options = replace(options, thread_id=_stored_thread_id(options.thread_id))
        result = await self._recaller.recall(scope, query, options)
        if not record:
            return result
        self._lifecycle.record_recall(scope, bool(result.results))
        await self._lifecycle.touch(scope, [r.id for r in result.results])
        return result

    async def memory_context(
        self, scope: Scope, query: str, *, thread_id: str | None, max_tokens: int
    ) -> MemoryContext:
        """Core + working + recalled memory as one cited block within ``max_tokens``."""
        context, used = await self._context.build(scope, query, _stored_thread_id(thread_id), max_tokens)
        self._lifecycle.record_recall(scope, bool(context.recalled))
        await self._lifecycle.touch(scope, used)
        return context

    async def core_memory(self, scope: Scope, limit: int) -> list[Memory]:
        """The pinned memories, most important first."""
        pinned, _ = await self._stores.vectors.scroll(MemoryFilter(scope=scope, pinned=True), limit)
        return sorted(pinned, key=lambda m: (-(m.importance or 0.5), m.created_at))

    async def thread_messages(self, scope: Scope, thread_id: str) -> list[Memory]:
        """A thread's stored messages in the order they were said; NotFoundError when it has none."""
        return await self.knowledge.thread_messages(scope, thread_id)

    async def adopt(self, legacy: str, scope: Scope) -> int:
        """Move what the project's old name ``legacy`` holds into ``scope``; how many items moved."""
        from hybrid_memory.service.adopt import holds_anything, move_project

        old = Scope(project=legacy, user=scope.user)
        if old == scope or not await holds_anything(self._stores, old):
            return 0
        moved = await move_project(self._stores, old, scope.project)
        logger.info(
            "moved %r to %r: %d memories, %d notes", legacy, scope.project, moved.memories, moved.notes
        )
        return moved.memories + moved.notes

    async def move_project(
        self, old: Scope, project: str, threads: list[str] | None = None
    ) -> tuple[int, int]:
        """Move ``old``'s memories, notes and links (or only ``threads``' memories) to ``project``;
        (memories, notes) moved."""
        from hybrid_memory.service.adopt import move_project

        moved = await move_project(self._stores, old, project, threads)
        return moved.memories, moved.notes

    async def projects(self) -> list[str]:
        """The configured user's projects that hold anything, by name."""
        return await browse.projects(self._live, self._stores.graph, self._settings.user)

    async def recent(self, scope: Scope, limit: int) -> list[Memory]:
        """The newest memories of the project, newest first."""
        return await browse.recent(self._live, scope, limit)

    # --- tasks ---------------------------------------------------------------------------------

    def _task(self, scope: Scope, task: TaskDraft | TaskPlan) -> TaskPlan:
        if isinstance(task, TaskPlan):
            return task
        count = self._stores.embedder.count_tokens
        return task_memory(scope, task, max_chars=self._settings.max_content_chars, count_tokens=count)

    async def plan_task(self, scope: Scope, draft: TaskDraft) -> DryRun[TaskPlan]:
        """Dry run of record_task: its task memory and what its eviction would summarise."""
        plan = self._task(scope, draft)
        return DryRun(plan, await self._lifecycle.summary_request(scope, [plan.memory]))

    async def record_task(
        self, scope: Scope, task: TaskDraft | TaskPlan, *, summarizer: Summarizer | None = None
    ) -> TaskResult:
        """A task outcome as a ``task`` memory: what was tried, what happened, whether it worked."""
        plan = self._task(scope, task)
        memory = plan.memory
        await self._stores.indexer.store([memory])
        evicted = await self._lifecycle.enforce(scope, summarizer)
        return TaskResult(
            id=memory.id, text=memory.text, success=plan.success, redacted=plan.redacted, evicted=evicted
        )

    # --- maintenance ------------------------------------------------------------------------

    async def repair(self, scope: Scope) -> int:
        """Re-index notes whose vector copy is missing (a write cut short); returns how many."""
        return await self._notes.repair(scope)


def _stored_thread_id(thread_id: str | None) -> str | None:
    """The id a thread is stored under: a secret-bearing id is stored under the one derived from it."""
    if thread_id is None or not thread_id.strip():
        return thread_id
    return validation.identifier(thread_id, "thread_id")
