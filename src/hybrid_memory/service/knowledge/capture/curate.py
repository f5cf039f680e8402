"""Writing distilled notes and consolidating a project's notes, through the note use cases.

Both write through a :class:`NoteWriter` (MemoryService), so a distilled note gets the same
redaction, near-duplicate check and indexing as one made with create_note, and a superseded
note is closed the way create_link closes it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.models import Link, MemoryFilter, MemoryKind, Note, NoteResult, Relation, Scope
from hybrid_memory.models.knowledge import (
    ConsolidationAction,
    ConsolidationResult,
    Distillation,
    DistillResult,
)
from hybrid_memory.service.knowledge.capture.consolidate import Verdict, judge
from hybrid_memory.service.knowledge.distill import source_tags
from hybrid_memory.service.writes.drafts import NoteDraft, NoteUpdate
from hybrid_memory.service.writes.validation import MAX_TAG_CHARS, MAX_TAGS
from hybrid_memory.text.words import cut

NEIGHBOURS = 6
"""Similar notes compared with each note."""


class NoteWriter(Protocol):
    async def create_note(self, scope: Scope, note: NoteDraft) -> NoteResult: ...

    async def update_note(self, scope: Scope, note_id: str, change: NoteUpdate) -> NoteResult: ...

    async def create_link(
        self, scope: Scope, *, from_id: str, to_id: str, relation: Relation, strength: float = 1.0
    ) -> Link: ...


def _tags(*groups: Sequence[str]) -> list[str]:
    merged = dict.fromkeys(
        t.strip() for g in groups for t in g if t.strip() and len(t.strip()) <= MAX_TAG_CHARS
    )
    return list(merged)[:MAX_TAGS]


class Curator:
    def __init__(self, *, vectors: VectorStore, graph: GraphStore) -> None:
        self._vectors = vectors
        self._graph = graph

    async def _similar(self, scope: Scope, note: Note, skip: set[str]) -> list[tuple[Note, float]]:
        """Live notes of the same type closest to ``note``, best first, leaving out ``skip``."""
        dense = (await self._vectors.dense_vectors(scope, [note.id])).get(note.id)
        if dense is None:
            return []
        flt = MemoryFilter(scope=scope, kinds=[MemoryKind.NOTE], note_types=[note.type])
        hits = [
            h for h in await self._vectors.search_dense(dense, flt, NEIGHBOURS) if h.memory.id not in skip
        ]
        found = {n.id: n for n in await self._graph.get_notes(scope, [h.memory.id for h in hits])}
        return [
            (found[h.memory.id], h.score)
            for h in hits
            if h.memory.id in found and h.memory.id != note.id and found[h.memory.id].valid_to is None
        ]

    async def apply_distillation(
        self, scope: Scope, writer: NoteWriter, thread_id: str, distilled: Distillation, source: str
    ) -> DistillResult:
        """Create the notes (a live near-duplicate is reused), their links, and supersede what they change."""
        ids: dict[str, str] = {}
        created: list[str] = []
        existing: list[str] = []
        superseded: list[str] = []
        for item in distilled.notes:
            draft = NoteDraft(
                content=item.content,
                type=item.type,
                tags=_tags(item.tags, source_tags(item.sources)),
                thread_id=thread_id,
            )
            note = await writer.create_note(scope, draft)
            ids[item.key] = note.id
            (existing if note.duplicate else created).append(note.id)
            if note.duplicate:
                continue
            if note.supersedes is not None:  # create_note saw a value changed: the older note is closed
                superseded.append(note.supersedes)
                continue
            for old, similarity in await self._similar(scope, note, set(created)):
                verdict = judge(old, note, similarity)
                if verdict is not None and verdict.action == "supersede" and verdict.keep.id == note.id:
                    await writer.create_link(
                        scope, from_id=note.id, to_id=old.id, relation=Relation.SUPERSEDES
                    )
                    superseded.append(old.id)
                    break
        for link in distilled.links:
            await writer.create_link(
                scope, from_id=ids[link.from_key], to_id=ids[link.to_key], relation=link.relation
            )
        return DistillResult(
            thread_id=thread_id,
            created=created,
            existing=list(dict.fromkeys(existing)),
            links=len(distilled.links),
            superseded=superseded,
            source=source,
        )

    async def plan(self, scope: Scope, notes: Sequence[Note]) -> list[tuple[Verdict, float]]:
        """Which pairs of live notes to merge or supersede; each note in at most one pair."""
        touched: set[str] = set()
        plan: list[tuple[Verdict, float]] = []
        for note in sorted(notes, key=lambda n: (n.created, n.id)):
            if note.id in touched:
                continue
            for other, similarity in await self._similar(scope, note, touched):
                verdict = judge(note, other, similarity)
                if verdict is not None:
                    plan.append((verdict, similarity))
                    touched.update((note.id, other.id))
                    break
        return plan

    async def consolidate(
        self, scope: Scope, writer: NoteWriter, notes: Sequence[Note], *, apply: bool
    ) -> ConsolidationResult:
        """Merge near-duplicates into the older note, let changed values supersede; apply=False: plan only."""
        plan = await self.plan(scope, notes)
        actions = [
            ConsolidationAction(
                action=v.action,
                keep_id=v.keep.id,
                drop_id=v.drop.id,
                keep=cut(v.keep.content, 160),
                drop=cut(v.drop.content, 160),
                similarity=round(similarity, 4),
            )
            for v, similarity in plan
        ]
        if apply:
            for verdict, _ in plan:
                if verdict.action == "merge":
                    keep, drop = verdict.keep, verdict.drop
                    importance = max(
                        (i for i in (keep.importance, drop.importance) if i is not None), default=None
                    )
                    change = NoteUpdate(tags=_tags(keep.tags, drop.tags), importance=importance)
                    await writer.update_note(scope, keep.id, change)
                await writer.create_link(
                    scope, from_id=verdict.keep.id, to_id=verdict.drop.id, relation=Relation.SUPERSEDES
                )
        return ConsolidationResult(applied=apply, actions=actions, notes_checked=len(notes))
