"""Limits, eviction with summarize-and-replace, retention cleanup, pins and statistics.

Limits are enforced after every write, under one lock per scope, so a burst of
concurrent writes ends within the limits. A write whose scope's running counts
(:mod:`~hybrid_memory.service.usage`, an upper bound) stay within the limits needs
no eviction and reads nothing; otherwise its enforcement scans the store after its
own write, and the last one to take the lock sees every write before it.
A summary is written before what it replaces is deleted, so a crash in between
leaves a duplicate, never a loss.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter, defaultdict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

import anyio

from hybrid_memory.errors import InvalidInputError, NotFoundError
from hybrid_memory.models import (
    CleanupResult,
    ForgetPreview,
    KindStats,
    LimitsInfo,
    Liveness,
    Memory,
    MemoryFilter,
    MemoryKind,
    MemoryStats,
    NoteFilter,
    PinResult,
    PreviewItem,
    Scope,
    utcnow,
)
from hybrid_memory.service import progress
from hybrid_memory.service._pages import every
from hybrid_memory.service.lifecycle import eviction
from hybrid_memory.service.lifecycle.eviction_summary import Summarizer as Summarizer
from hybrid_memory.service.lifecycle.eviction_summary import SummaryRequest as SummaryRequest
from hybrid_memory.service.lifecycle.eviction_summary import model_summary, summary_lines
from hybrid_memory.service.stores import Stores
from hybrid_memory.service.usage import Tally
from hybrid_memory.settings import LifecycleSettings

logger = logging.getLogger(__name__)

MAX_LISTED = 500
MAX_REPLACES = 1000


Step = Callable[[int, str], Awaitable[None]]
"""One step of three done, with what comes next: how cleanup reports its progress."""


async def _quiet(done: int, message: str) -> None:
    """A write's own enforcement reports nothing: the write reports its own progress."""


async def _cleanup_step(done: int, message: str) -> None:
    await progress.report(done, 3, message)


@dataclass(frozen=True)
class _Planned:
    plan: eviction.Plan
    expired: list[Memory]
    memories: dict[str, Memory]


class Lifecycle:
    """The lifecycle use cases of one server; MemoryService exposes them under its own names."""

    def __init__(
        self,
        *,
        settings: LifecycleSettings,
        stores: Stores,
        summarizer: Summarizer | None = None,
    ) -> None:
        self._settings = settings
        self._stores = stores
        self._usage = stores.indexer.usage
        self._fallback = summarizer
        self._locks: defaultdict[Scope, anyio.Lock] = defaultdict(anyio.Lock)
        self._counters: defaultdict[Scope, Counter[str]] = defaultdict(Counter)
        """Per scope, since the start: evictions, summaries, deleted_expired, recalls, recall_hits."""

    # --- reading ------------------------------------------------------------------------------

    async def all_memories(self, flt: MemoryFilter) -> list[Memory]:
        return await every(self._stores.vectors, flt)

    @property
    def summarizes(self) -> bool:
        """Whether writes may evict with a summary: limits are set and summarize-on-evict is on."""
        return self._settings.limited and self._settings.summarize_on_evict

    def limits_info(self) -> LimitsInfo:
        # Every field of LimitsInfo is a lifecycle setting of the same name.
        return LimitsInfo.model_validate(self._settings, from_attributes=True)

    def _expired(self, memory: Memory, now: datetime) -> bool:
        # The precedence reads use too (service/lifecycle/retention.py): a pin always wins.
        days = self._settings.retention_days
        since = None if days is None else now - timedelta(days=days)
        return Liveness(now=now, retained_from=since).expired(memory)

    def _limits(self, now: datetime) -> eviction.Limits:
        s = self._settings
        return eviction.Limits(
            max_items=s.max_items,
            max_tokens=s.max_tokens,
            policy=s.eviction_policy,
            ttl_cutoff=None if s.ttl_days is None else now - timedelta(days=s.ttl_days),
            summary_tokens=eviction.summary_budget(s.max_tokens) if s.summarize_on_evict else 0,
        )

    def _fits(self, scope: Scope, now: datetime, adding: Sequence[Memory] = ()) -> bool:
        """Whether the scope's running counts (``adding`` included) show no eviction is due."""
        tally = self._usage.current(scope)
        return tally is not None and tally.plus(Tally.of(adding)).within(self._limits(now))

    async def _plan(self, scope: Scope, now: datetime, adding: Sequence[Memory] = ()) -> _Planned:
        """What the limits remove now; ``adding``: memories a write is about to store (a dry run)."""
        memories = {m.id: m for m in await self.all_memories(MemoryFilter(scope=scope))}
        memories.update((m.id, m) for m in adding)
        expired = [m for m in memories.values() if self._expired(m, now)]
        gone = {m.id for m in expired}
        s = self._settings
        limits = self._limits(now)
        items = [m for m in memories.values() if m.id not in gone]
        plan = eviction.plan_eviction(items, limits) if s.limited else eviction.Plan({}, False)
        if plan.summarize:
            # One rolling summary per scope: earlier eviction summaries merge into the new one.
            merged = {
                m.id: "merged"
                for m in memories.values()
                if m.kind is MemoryKind.SUMMARY
                and (m.source or "").startswith("eviction:")
                and not m.pinned
                and m.id not in plan.evictions
                and m.id not in gone
            }
            plan = eviction.Plan({**plan.evictions, **merged}, summarize=True)
        return _Planned(plan=plan, expired=expired, memories=memories)

    # --- enforcing --------------------------------------------------------------------------

    async def enforce(self, scope: Scope, summarizer: Summarizer | None = None) -> int:
        """Evict what the limits require (after a write); returns how many memories went."""
        if not self._settings.limited:
            return 0
        async with self._locks[scope]:
            if self._fits(scope, utcnow()):
                return 0
            _, evicted, _ = await self._apply(scope, summarizer, remove_expired=False)
            return evicted

    async def _apply(
        self, scope: Scope, summarizer: Summarizer | None, *, remove_expired: bool, step: Step = _quiet
    ) -> tuple[_Planned, int, str | None]:
        """Plan from a full scan and carry it out; the running counts start again from the scan."""
        self._usage.scanning(scope)
        try:
            await step(0, "planning")
            planned = await self._plan(scope, utcnow())
            if remove_expired:
                await step(1, f"deleting {len(planned.expired)} expired memories")
                removed = await self._remove(scope, planned.expired)
                self._counters[scope]["deleted_expired"] += len(removed)
            await step(2, f"evicting {len(planned.plan.evictions)} memories")
            evicted, summary_id = await self._evict(scope, planned, summarizer)
            await step(3, "done")
        except BaseException:
            self._usage.forget(scope)
            raise
        gone = {m.id for m in planned.expired} | set(planned.plan.evictions)
        self._usage.scanned(scope, (m for m in planned.memories.values() if m.id not in gone))
        return planned, evicted, summary_id

    async def cleanup(self, scope: Scope, summarizer: Summarizer | None = None) -> CleanupResult:
        """Delete expired memories (retention), then evict what the limits require."""
        async with self._locks[scope]:
            planned, evicted, summary_id = await self._apply(
                scope, summarizer, remove_expired=True, step=_cleanup_step
            )
        ids = [m.id for m in planned.expired] + list(planned.plan.evictions)
        return CleanupResult(
            deleted=len(planned.expired), evicted=evicted, summary_id=summary_id, ids=ids[:MAX_LISTED]
        )

    async def summary_request(self, scope: Scope, adding: Sequence[Memory] = ()) -> SummaryRequest | None:
        """Dry run: what the eviction after storing ``adding`` would summarise; None: no summary.

        Lets a caller have the summary written (by the MCP client's model) before the write.
        """
        if not self.summarizes or self._fits(scope, utcnow(), adding):
            return None
        planned = await self._plan(scope, utcnow(), adding)
        if not (planned.plan.summarize and planned.plan.evictions):
            return None
        victims = [planned.memories[i] for i in planned.plan.evictions]
        if any(m.private for m in victims):
            return None  # private text never leaves the machine: the extractive summary stays local
        budget = eviction.summary_budget(self._settings.max_tokens)
        return SummaryRequest(lines=summary_lines(victims), budget=budget)

    async def preview(self, scope: Scope, limit: int, cursor: str | None) -> ForgetPreview:
        """What :meth:`cleanup` would remove now, a page at a time; changes nothing."""
        start = _cursor(cursor)
        planned = await self._plan(scope, utcnow())
        rows = [(m, "expired") for m in planned.expired] + [
            (planned.memories[i], reason) for i, reason in planned.plan.evictions.items()
        ]
        page = rows[start : start + limit]
        return ForgetPreview(
            items=[
                PreviewItem(
                    id=m.id,
                    kind=m.kind,
                    reason=r,
                    text=m.text[:200],
                    tokens=m.tokens,
                    created_at=m.created_at,
                )
                for m, r in page
            ],
            total=len(rows),
            summarized=planned.plan.summarize,
            next_cursor=str(start + limit) if start + limit < len(rows) else None,
            limits=self.limits_info(),
        )

    async def _remove(self, scope: Scope, memories: Sequence[Memory]) -> list[str]:
        for note in (m for m in memories if m.kind is MemoryKind.NOTE):
            await self._stores.graph.delete_note(scope, note.id)
        ids = [m.id for m in memories]
        if ids:
            await self._stores.vectors.delete(scope, ids)
        return ids

    async def _evict(
        self, scope: Scope, planned: _Planned, summarizer: Summarizer | None
    ) -> tuple[int, str | None]:
        victims = [planned.memories[i] for i in planned.plan.evictions]
        if not victims:
            return 0, None
        summary_id = None
        if planned.plan.summarize:
            summary = await self._summary(scope, victims, summarizer)
            await self._stores.indexer.store([summary])
            summary_id = summary.id
            self._counters[scope]["summaries"] += 1
        await self._remove(scope, victims)
        self._counters[scope]["evictions"] += len(victims)
        logger.info("evicted %d memories of project %s", len(victims), scope.project)
        return len(victims), summary_id

    async def _summary(
        self, scope: Scope, victims: Sequence[Memory], summarizer: Summarizer | None
    ) -> Memory:
        victims = sorted(victims, key=lambda m: m.created_at)
        budget = eviction.summary_budget(self._settings.max_tokens)
        lines = summary_lines(victims)
        # Private text never goes to a model, the client's or a configured one.
        private = any(m.private for m in victims)
        models = () if private else (("sampling", summarizer), ("model", self._fallback))
        text, source = await model_summary(lines, budget, models)
        count = sum(max(1, m.replaced_count) if m.kind is MemoryKind.SUMMARY else 1 for m in victims)
        if text is None:
            text = eviction.extractive_summary(
                lines, count=count, since=victims[0].created_at, until=victims[-1].created_at
            )
        text = self._fit(text.strip(), budget)
        threads = {m.thread_id for m in victims}
        return Memory(
            id=str(uuid.uuid4()),
            kind=MemoryKind.SUMMARY,
            text=text,
            project=scope.project,
            user=scope.user,
            thread_id=threads.pop() if len(threads) == 1 else None,
            tags=["summary"],
            source=f"eviction:{source}",
            tokens=self._stores.embedder.count_tokens(text),
            private=any(m.private for m in victims),
            replaces=[m.id for m in victims][:MAX_REPLACES],
            replaced_count=count,
        )

    def _fit(self, text: str, budget: int) -> str:
        # Re-counted after each cut: a word cut in half may tokenise into more pieces.
        while self._stores.embedder.count_tokens(text) > budget:
            text = eviction.truncate_to_tokens(text, self._stores.embedder.token_spans(text), budget)
        return text

    # --- pins, access, stats ------------------------------------------------------------------

    async def pin(self, scope: Scope, memory_id: str, pinned: bool) -> PinResult:
        found = await self._stores.vectors.get(scope, [memory_id])
        if not found:
            verb = "pin" if pinned else "unpin"
            raise NotFoundError(
                f"No memory or note '{memory_id}' in this project. recall_memory and create_note "
                f"return the ids you can {verb}."
            )
        memory = found[0]
        if memory.pinned != pinned:
            await self._stores.vectors.set_payload(scope, memory.id, {"pinned": pinned})
            self._usage.forget(scope)  # a pin changes what the limits may evict: count again
        return PinResult(
            id=memory.id, kind=memory.kind, pinned=pinned, changed=memory.pinned != pinned, text=memory.text
        )

    async def touch(self, scope: Scope, ids: Sequence[str]) -> None:
        """Record access for the lru policy (only then: each is a write)."""
        if not (self._settings.limited and self._settings.eviction_policy == "lru"):
            return
        now = utcnow()
        for memory_id in ids:
            await self._stores.vectors.set_payload(scope, memory_id, {"last_accessed_at": now})

    def record_recall(self, scope: Scope, hit: bool) -> None:
        counters = self._counters[scope]
        counters["recalls"] += 1
        counters["recall_hits"] += int(hit)

    async def stats(self, scope: Scope) -> MemoryStats:
        memories = await self.all_memories(MemoryFilter(scope=scope))
        by_kind = {kind: [0, 0] for kind in MemoryKind}
        for m in memories:
            by_kind[m.kind][0] += 1
            by_kind[m.kind][1] += m.tokens
        c = self._counters[scope]
        return MemoryStats(
            project=scope.project,
            items=len(memories),
            tokens=sum(m.tokens for m in memories),
            by_kind=[KindStats(kind=k, count=n, tokens=t) for k, (n, t) in by_kind.items()],
            pinned=sum(m.pinned for m in memories),
            private=sum(m.private for m in memories),
            notes=await self._stores.graph.count_notes(NoteFilter(scope=scope)),
            evictions=c["evictions"],
            summaries_written=c["summaries"],
            deleted_expired=c["deleted_expired"],
            recalls=c["recalls"],
            recall_hit_rate=None if not c["recalls"] else round(c["recall_hits"] / c["recalls"], 4),
            limits=self.limits_info(),
        )


def _cursor(cursor: str | None) -> int:
    if cursor is None:
        return 0
    if not cursor.isdigit():
        raise InvalidInputError(
            f"cursor {cursor!r} is not one forget_preview returned; omit it for the first page."
        )
    return int(cursor)
