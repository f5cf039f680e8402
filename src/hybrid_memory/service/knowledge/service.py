"""The knowledge use cases over the stores; MemoryService exposes them as ``service.knowledge``."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from hybrid_memory.errors import InvalidInputError, NotFoundError
from hybrid_memory.models import (
    Link,
    Memory,
    MemoryFilter,
    MemoryKind,
    Note,
    NoteFilter,
    RememberResult,
    Scope,
    utcnow,
)
from hybrid_memory.models.knowledge import (
    ConsolidationResult,
    DistillResult,
    GraphMap,
    RateResult,
    Rating,
    ThreadSummaryResult,
)
from hybrid_memory.service._pages import every
from hybrid_memory.service.knowledge import distill, feedback, graphmap, thread_summary
from hybrid_memory.service.redaction import redact
from hybrid_memory.service.stores import Stores
from hybrid_memory.service.writes import validation
from hybrid_memory.settings import LifecycleSettings

if TYPE_CHECKING:
    from hybrid_memory.service.knowledge.capture.curate import Curator, NoteWriter
    from hybrid_memory.service.knowledge.capture.harvest import Harvest, Harvester, HarvestWriter

logger = logging.getLogger(__name__)

PAGE = 256
MAX_GRAPH_NOTES = 5_000
"""The most notes the map and the picture read; a larger graph is mapped by its newest notes."""


class Knowledge:
    """Capture (the statement finder, its cue lexicons and patterns) loads on first use: a server's
    first recall needs none of it."""

    def __init__(self, settings: LifecycleSettings, stores: Stores) -> None:
        self._settings = settings
        self._stores = stores

    @cached_property
    def _curator(self) -> Curator:
        from hybrid_memory.service.knowledge.capture.curate import Curator

        return Curator(vectors=self._stores.vectors, graph=self._stores.graph)

    @cached_property
    def _harvester(self) -> Harvester:
        from hybrid_memory.service.knowledge.capture.harvest import Harvester

        stores = self._stores
        return Harvester(vectors=stores.vectors, graph=stores.graph, embedder=stores.embedder)

    async def rate(self, scope: Scope, memory_id: str, rating: Rating) -> RateResult:
        stores = self._stores
        return await feedback.rate(stores.vectors, stores.graph, scope, memory_id, rating, utcnow())

    # --- thread summaries -------------------------------------------------------------

    async def _messages(self, scope: Scope, thread_id: str) -> list[Memory]:
        """Every message memory of a thread, in thread order."""
        flt = MemoryFilter(scope=scope, thread_id=thread_id, kinds=[MemoryKind.MESSAGE])
        return thread_summary.in_order(await every(self._stores.vectors, flt))

    async def thread_messages(self, scope: Scope, thread_id: str) -> list[Memory]:
        """A thread's stored messages in the order they were said; NotFoundError when it has none."""
        messages = await self._messages(scope, validation.identifier(thread_id, "thread_id"))
        if not messages:
            raise NotFoundError(f"No thread '{thread_id}' in this project. list_threads returns thread ids.")
        return messages

    async def summarize_thread(
        self, scope: Scope, thread_id: str, *, text: str | None = None, messages: Sequence[Memory] = ()
    ) -> ThreadSummaryResult:
        """Write or rewrite the thread's summary memory (``text``, else extracted); unchanged, nothing."""
        thread_id = validation.identifier(thread_id, "thread_id")
        messages = messages or await self.thread_messages(scope, thread_id)
        text = text or thread_summary.extract(messages, thread_id)
        memory_id = thread_summary.summary_id(scope, thread_id)
        old = await self._stores.vectors.get(scope, [memory_id])
        changed = not old or old[0].text != text
        if changed:
            memory = Memory(
                id=memory_id,
                kind=MemoryKind.SUMMARY,
                text=text,
                project=scope.project,
                user=scope.user,
                thread_id=thread_id,
                created_at=messages[-1].created_at,
                source=thread_summary.SOURCE,
                private=any(m.private for m in messages),
                tokens=self._stores.embedder.count_tokens(text),
            )
            await self._stores.indexer.store([memory])
        return ThreadSummaryResult(
            id=memory_id, thread_id=thread_id, text=text, messages=len(messages), changed=changed
        )

    async def thread_grew(self, scope: Scope, remembered: RememberResult) -> None:
        """After remember_thread: refresh the summary of a thread that changed and is long enough."""
        least = self._settings.thread_summary_min_messages
        if least <= 0 or not remembered.stored:
            return
        flt = MemoryFilter(scope=scope, thread_id=remembered.thread_id, kinds=[MemoryKind.MESSAGE])
        if await self._stores.vectors.count(flt) >= least:
            await self.summarize_thread(scope, remembered.thread_id)

    async def harvest(self, scope: Scope, writer: HarvestWriter, remembered: RememberResult) -> Harvest:
        """After a captured remember_thread: its turns' notes, entities, links; the session's digest."""
        from hybrid_memory.service.knowledge.capture import digest
        from hybrid_memory.service.knowledge.capture.harvest import said_of
        from hybrid_memory.service.knowledge.statements.cues import cues

        turns = thread_summary.in_order(await self.memories(scope, remembered.memory_ids))
        done = await self._harvester.run(scope, writer, remembered.thread_id, turns)
        session = await self._messages(scope, remembered.thread_id)
        said = [said_of(m) for m in session]
        text = await self._model_digest(session) or digest.digest(said, cues(said))
        if text:
            await self.summarize_thread(scope, remembered.thread_id, text=text, messages=session)
        return done

    async def _model_digest(self, session: Sequence[Memory]) -> str | None:
        """The configured model's digest (HYBRID_MEMORY_SUMMARY_MODEL); None without one or when it fails."""
        from hybrid_memory.service.knowledge.capture import digest

        if self._settings.summary_model is None:
            return None
        question = distill.DistillRequest(
            system=digest.MODEL_SYSTEM, user=distill.transcript(session), max_tokens=400
        )
        try:
            answer = await distill.ask_model(self._settings, question)
        except Exception:  # the deterministic digest always works
            logger.warning(
                "the digest model failed; the session's digest is written without it", exc_info=True
            )
            return None
        text = digest.model_answer(answer)
        return None if text is None else redact(text).text

    async def memories(self, scope: Scope, ids: Sequence[str]) -> list[Memory]:
        """The memories among ``ids``, a page at a time."""
        found: list[Memory] = []
        for start in range(0, len(ids), PAGE):
            found.extend(await self._stores.vectors.get(scope, ids[start : start + PAGE]))
        return found

    # --- the graph ----------------------------------------------------------------------

    async def graph(self, scope: Scope, *, include_invalid: bool = False) -> tuple[list[Note], list[Link]]:
        """The project's notes (newest MAX_GRAPH_NOTES, live only unless asked) and the links among them."""
        flt = NoteFilter(scope=scope, valid_at=None if include_invalid else utcnow())
        notes: list[Note] = []
        while len(notes) < MAX_GRAPH_NOTES:
            limit = min(PAGE, MAX_GRAPH_NOTES - len(notes))
            page = await self._stores.graph.list_notes(flt, limit, len(notes))
            notes.extend(page)
            if len(page) < PAGE:
                break
        ids = {n.id for n in notes}
        now = utcnow()
        links: list[Link] = []
        offset = 0
        while True:
            page_links = await self._stores.graph.list_links(scope, PAGE, offset)
            links.extend(
                lk
                for lk in page_links
                if lk.from_id in ids
                and lk.to_id in ids
                and (include_invalid or lk.valid_to is None or lk.valid_to > now)
            )
            offset += len(page_links)
            if len(page_links) < PAGE:
                return notes, links

    async def texts(self, scope: Scope, ids: Sequence[str]) -> dict[str, str]:
        """The text of each memory among ``ids`` (a note's cited messages)."""
        return {m.id: m.text for m in await self.memories(scope, ids)}

    async def map(self, scope: Scope, *, limit: int, max_tokens: int) -> GraphMap:
        notes, links = await self.graph(scope)
        return graphmap.fit(graphmap.build_map(notes, links, limit=limit), max_tokens)

    # --- distillation and consolidation -------------------------------------------------

    async def distill_prompt(self, scope: Scope, thread_id: str) -> str:
        """Instructions and the thread for an agent that stores the notes itself."""
        return distill.prompt_text(thread_id, await self.thread_messages(scope, thread_id))

    async def distill_request(self, scope: Scope, thread_id: str) -> distill.DistillRequest:
        return distill.request(thread_id, await self.thread_messages(scope, thread_id))

    async def distill(
        self, scope: Scope, writer: NoteWriter, thread_id: str, sampled: str | None
    ) -> DistillResult:
        """Notes from the client's answer ``sampled``, else from the configured model."""
        messages = await self.thread_messages(scope, thread_id)
        answer, source = sampled, "sampling"
        if answer is None:
            answer, source = (
                await distill.ask_model(self._settings, distill.request(thread_id, messages)),
                "model",
            )
        if answer is None:
            raise InvalidInputError(
                "No model to distill with: the client cannot sample and HYBRID_MEMORY_SUMMARY_MODEL is "
                "unset. Use the distill_thread prompt and store the notes with create_note yourself."
            )
        distilled = distill.parse(answer, {m.id for m in messages})
        return await self._curator.apply_distillation(scope, writer, thread_id, distilled, source)

    async def consolidate(self, scope: Scope, writer: NoteWriter, *, apply: bool) -> ConsolidationResult:
        notes, _ = await self.graph(scope)
        return await self._curator.consolidate(scope, writer, notes, apply=apply)
