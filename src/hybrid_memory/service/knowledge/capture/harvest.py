"""Capture's second half: the notes, entities and links a session's turns state, and its digest.

Run by the host after a captured remember_thread (the plugin's hooks and import-transcript
share that path), over the turns of that call:

- each statement the finder draws (:mod:`..statements.finder`: cues and a classifier over
  clauses) becomes a note under a deterministic id (project, kind, wording);
  stated again, in the same words or close ones (embedding), it *reinforces* that note
  (importance up, modified now, a new ``src:`` tag) rather than copying it; a change
  ("we moved billing from Postgres 16 to CockroachDB", or a new value for the same thing)
  supersedes what it changes (a ``supersedes`` link, the old note's ``valid_to`` closed);
- each entity (:mod:`.entities`) is a ``concept`` note tagged ``entity:<kind>``, one per
  project and name, citing the turns that mention it (newest ``src:`` tags kept), linked to
  the notes that name it and to its session's node (``entity:session``), so a walk from
  ``src/auth.py`` reaches every session that touched it and what was decided there;
- the session's digest (:mod:`.digest`) is its summary memory.

Writing what is already there changes nothing: a turn already cited adds no tag, no link.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.models import (
    Link,
    Memory,
    MemoryFilter,
    MemoryKind,
    Note,
    NoteResult,
    NoteType,
    Relation,
    Scope,
    utcnow,
)
from hybrid_memory.service.knowledge._text import content_words
from hybrid_memory.service.knowledge.capture import changes, consolidate
from hybrid_memory.service.knowledge.capture.entities import Entity, mentioned, services
from hybrid_memory.service.knowledge.distill import SOURCE_TAG
from hybrid_memory.service.knowledge.statements.cues import (
    CAPTURED,
    MAX_MESSAGE_CHARS,
    MAX_SENTENCE_CHARS,
    Cue,
    Said,
    key,
)
from hybrid_memory.service.knowledge.statements.finder import find
from hybrid_memory.service.writes.drafts import DryRun, NoteDraft
from hybrid_memory.service.writes.notes import NotePlan
from hybrid_memory.service.writes.validation import MAX_TAGS
from hybrid_memory.text.junk import junk, prose
from hybrid_memory.text.words import words

_NAMESPACE = uuid.UUID("5d0c3c9e-8f0e-4b7a-9a51-2f6c1d7e4a10")
SOURCE = "capture"
IMPORTANCE = {"rule": 0.8, "decision": 0.75, "preference": 0.65, "fact": 0.6}
ENTITY_IMPORTANCE = 0.3
REINFORCE_STEP = 0.05
SAME_NOTE_SIMILARITY = consolidate.DUPLICATE_SIMILARITY
NEIGHBOURS = 6
SOURCES_KEPT = 20
"""``src:`` tags an entity or a note keeps (the newest): within the store's tag limit."""
_CHANGE_VERBS = frozenset(
    ("moved", "moving", "switched", "migrated", "changed", "replaced", "upgraded", "now", "from", "to")
)


class HarvestWriter(Protocol):
    """The note use cases harvest writes through (MemoryService): redaction, indexing, closing links."""

    async def plan_note(self, scope: Scope, draft: NoteDraft) -> DryRun[NotePlan]: ...

    async def create_note(self, scope: Scope, note: NotePlan) -> NoteResult: ...

    async def create_link(
        self, scope: Scope, *, from_id: str, to_id: str, relation: Relation, strength: float = 1.0
    ) -> Link: ...


@dataclass
class Harvest:
    """What one harvest wrote."""

    created: list[str] = field(default_factory=list)
    reinforced: list[str] = field(default_factory=list)
    superseded: list[str] = field(default_factory=list)
    entities: list[str] = field(default_factory=list)
    links: int = 0
    cues: list[Cue] = field(default_factory=list)
    private: bool = False
    """Drawn from private turns: the notes are private too (never exported)."""


def stable_id(scope: Scope, *parts: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join((scope.project, scope.user, *parts))))


def _sources(tags: Sequence[str]) -> list[str]:
    return [t for t in tags if t.startswith(SOURCE_TAG)]


def _cite(tags: Sequence[str], new: Sequence[str]) -> list[str]:
    """``tags`` with the ``src:`` tags of ``new`` added, the oldest sources dropped past SOURCES_KEPT."""
    others = [t for t in tags if not t.startswith(SOURCE_TAG)]
    cited = list(dict.fromkeys([*_sources(tags), *(f"{SOURCE_TAG}{s}" for s in new)]))
    room = min(SOURCES_KEPT, MAX_TAGS - len(others))
    return [*others, *cited[-room:]]


def said_of(memory: Memory) -> Said:
    """A stored turn as the knowledge rules read it, its tool uses from its fields when it has them."""
    uses = tuple(u.model_dump(exclude_none=True) for u in memory.activity) if memory.activity else None
    return Said(memory.id, memory.role or "", memory.text, uses)


class Harvester:
    def __init__(self, *, vectors: VectorStore, graph: GraphStore, embedder: Embedder) -> None:
        self._vectors = vectors
        self._graph = graph
        self._embedder = embedder

    async def run(
        self, scope: Scope, writer: HarvestWriter, thread_id: str, turns: Sequence[Memory]
    ) -> Harvest:
        """Notes, entities and links from ``turns`` (one remember call's memories, in order)."""
        said = [said_of(m) for m in turns]
        found = [c for c in await find(said, self._embedder) if junk(c.content) is None]  # no paste
        done = Harvest(cues=found, private=any(m.private for m in turns))
        session = await self._session(scope, writer, thread_id, said, done)
        note_ids: dict[str, str] = {}
        by_user = {t.id for t in said if t.role == "user"}
        users_values = {
            v for c in done.cues if by_user & set(c.sources) for v in consolidate.values(c.content)
        }
        for cue in done.cues:
            if not by_user & set(cue.sources) and changes.restates(cue.content, users_values):
                continue  # the assistant saying back what the user said: the user's words are the note
            note_id = await self._note(scope, writer, thread_id, cue, done)
            # Only a note made or stated again now gains links: reading old turns again adds none.
            if note_id is not None and note_id in {*done.created, *done.reinforced}:
                note_ids[cue.content] = note_id
                await self._link(scope, writer, note_id, session, Relation.PART_OF, done)
        await self._in_passing(scope, writer, thread_id, said, note_ids, done)
        by_key: dict[str, tuple[Entity, list[str]]] = {}
        for turn in said:
            for entity in mentioned(turn.text, said_by_user=turn.role == "user", uses=turn.uses):
                by_key.setdefault(entity.key, (entity, []))[1].append(turn.id)
        for cue in done.cues:
            for entity in [*mentioned(cue.content, said_by_user=False), *services(cue.content)]:
                by_key.setdefault(entity.key, (entity, []))[1].extend(cue.sources)
        for entity, sources in by_key.values():
            entity_id, fresh = await self._entity(scope, writer, thread_id, entity, sources, done)
            if fresh and session is not None:
                await self._link(scope, writer, entity_id, session, Relation.RELATES_TO, done)
            for cue in done.cues:
                if cue.content in note_ids and _names(cue.content, entity):
                    await self._link(
                        scope, writer, note_ids[cue.content], entity_id, Relation.RELATES_TO, done
                    )
        return done

    async def _link(
        self,
        scope: Scope,
        writer: HarvestWriter,
        from_id: str,
        to_id: str | None,
        relation: Relation,
        done: Harvest,
    ) -> None:
        if to_id is None or from_id == to_id:
            return
        await writer.create_link(scope, from_id=from_id, to_id=to_id, relation=relation, strength=0.8)
        done.links += 1

    async def _plan(
        self, scope: Scope, writer: HarvestWriter, note_id: str, draft: NoteDraft, *, private: bool
    ) -> NotePlan:
        """The note under ``note_id`` as the note use cases prepare it (redacted, embedded)."""
        plan = (await writer.plan_note(scope, replace(draft, force=True, private=private))).plan
        return replace(
            plan,
            note=plan.note.model_copy(update={"id": note_id}),
            memory=plan.memory.model_copy(update={"id": note_id, "source": SOURCE}),
        )

    async def _retag(self, scope: Scope, note: Note, tags: list[str], importance: float | None) -> None:
        """New tags (and importance) on a note and its searchable copy; its text, so its vector, unchanged."""
        changed = {"tags": tags, "importance": importance, "modified": utcnow()}
        await self._graph.upsert_note(note.model_copy(update=changed))
        await self._vectors.set_payload(scope, note.id, {"tags": tags, "importance": importance})

    async def _reinforce(self, scope: Scope, note: Note, cue: Cue) -> bool:
        """Cite the turns that stated ``note`` again; False when they are all cited already."""
        cited = set(_sources(note.tags))
        if all(f"{SOURCE_TAG}{s}" in cited for s in cue.sources):
            return False
        importance = min(1.0, (note.importance or IMPORTANCE[cue.kind]) + REINFORCE_STEP)
        await self._retag(scope, note, _cite(note.tags, cue.sources), round(importance, 6))
        return True

    async def _near(
        self, scope: Scope, dense: list[float], note_type: NoteType | None, limit: int
    ) -> list[tuple[Note, float]]:
        """Live captured notes (of ``note_type``) closest to ``dense``, best first."""
        types = None if note_type is None else [note_type]
        flt = MemoryFilter(scope=scope, kinds=[MemoryKind.NOTE], note_types=types, tags=[CAPTURED])
        hits = await self._vectors.search_dense(dense, flt, limit)
        found = {n.id: n for n in await self._graph.get_notes(scope, [h.memory.id for h in hits])}
        return [
            (found[h.memory.id], h.score)
            for h in hits
            if h.memory.id in found and found[h.memory.id].valid_to is None
        ]

    async def _note(
        self, scope: Scope, writer: HarvestWriter, thread_id: str, cue: Cue, done: Harvest
    ) -> str | None:
        note_id = stable_id(scope, cue.kind, key(cue.content))
        existing = next(iter(await self._graph.get_notes(scope, [note_id])), None)
        if existing is not None:
            if existing.valid_to is not None:
                return None  # stated once, superseded since: an old turn read again changes nothing
            if await self._reinforce(scope, existing, cue):
                done.reinforced.append(note_id)
            return note_id
        draft = NoteDraft(
            content=cue.content,
            type=cue.type,
            tags=_cite(cue.tags, cue.sources),
            importance=IMPORTANCE[cue.kind],
            thread_id=thread_id,
        )
        plan = await self._plan(scope, writer, note_id, draft, private=done.private)
        similar = await self._near(scope, plan.dense, cue.type, NEIGHBOURS)
        for old, similarity in similar:
            same = similarity >= SAME_NOTE_SIMILARITY and consolidate.same_subject(old.content, cue.content)
            if same and not consolidate.changed_value(old.content, cue.content):
                # Said again in other words: the older note stands, reinforced.
                if await self._reinforce(scope, old, cue):
                    done.reinforced.append(old.id)
                return old.id
        changed = await self._changed(scope, cue, plan, similar)
        await writer.create_note(scope, plan)
        done.created.append(note_id)
        for old in changed:
            await writer.create_link(scope, from_id=note_id, to_id=old.id, relation=Relation.SUPERSEDES)
            done.superseded.append(old.id)
            done.links += 1
        return note_id

    async def _in_passing(
        self,
        scope: Scope,
        writer: HarvestWriter,
        thread_id: str,
        said: Sequence[Said],
        note_ids: dict[str, str],
        done: Harvest,
    ) -> None:
        """A move said anywhere ("Heads-up: we moved billing from Postgres 16 to …", "btw Redis is gone",
        in the assistant's confirmation too) supersedes the live notes stating what it replaced; the
        sentence becomes a decision note of its own when no cue made one."""
        for turn in said:
            if turn.role not in ("user", "assistant") or len(turn.text) > MAX_MESSAGE_CHARS:
                continue
            for sentence in changes.prose(turn.text):
                found = changes.moves(sentence)
                if not found or len(sentence) > MAX_SENTENCE_CHARS:
                    continue
                content = changes.tidy(sentence)
                stated = next(
                    (i for c, i in note_ids.items() if key(c) in key(content) or key(content) in key(c)), None
                )
                note_id = stated or stable_id(scope, "decision", key(content))
                draft = NoteDraft(
                    content=content,
                    type=NoteType.DECISION,
                    tags=_cite([CAPTURED, "decision"], [turn.id]),
                    importance=IMPORTANCE["decision"],
                    thread_id=thread_id,
                )
                plan = await self._plan(scope, writer, note_id, draft, private=done.private)
                near = await self._near(scope, plan.dense, None, NEIGHBOURS * 4)
                old = [
                    n
                    for n, _ in near
                    if n.id != note_id
                    and n.id not in note_ids.values()
                    and n.type in (NoteType.DECISION, NoteType.FACT, NoteType.PREFERENCE)
                    and any(changes.moved_from(move, n.content) for move in found)
                ]
                if not old:
                    continue
                if not await self._graph.get_notes(scope, [note_id]):
                    await writer.create_note(scope, plan)
                    done.created.append(note_id)
                for note in old:
                    await writer.create_link(
                        scope, from_id=note_id, to_id=note.id, relation=Relation.SUPERSEDES
                    )
                    done.superseded.append(note.id)
                    done.links += 1

    async def _changed(
        self, scope: Scope, cue: Cue, plan: NotePlan, similar: list[tuple[Note, float]]
    ) -> list[Note]:
        """The live notes the new one changes: those naming the value it replaces, or an older value of it."""
        if cue.replaces:
            old_value = re.compile(rf"(?<!\w){re.escape(cue.replaces)}(?!\w)", re.IGNORECASE)
            topic = set(content_words(cue.content)) - set(words(cue.replaces)) - _CHANGE_VERBS
            return [
                n
                for n, _ in await self._near(scope, plan.dense, None, NEIGHBOURS * 4)
                if n.type in (NoteType.DECISION, NoteType.FACT, NoteType.PREFERENCE)
                and old_value.search(n.content)
                and (not topic or topic & set(content_words(n.content)))
            ]
        for old, similarity in similar:
            changed = consolidate.changed_value(old.content, plan.note.content)
            if (
                similarity >= consolidate.CHANGE_SIMILARITY
                and changed
                and consolidate.same_topic(old.content, cue.content)
            ):
                return [old]
        return []

    async def _entity(
        self,
        scope: Scope,
        writer: HarvestWriter,
        thread_id: str,
        entity: Entity,
        sources: list[str],
        done: Harvest,
    ) -> tuple[str, bool]:
        """The entity's node, citing ``sources``; whether anything was new to it."""
        entity_id = stable_id(scope, "entity", entity.key)
        existing = next(iter(await self._graph.get_notes(scope, [entity_id])), None)
        if existing is None:
            draft = NoteDraft(
                content=entity.content,
                type=NoteType.CONCEPT,
                tags=_cite([CAPTURED, entity.tag], sources),
                importance=ENTITY_IMPORTANCE,
                thread_id=thread_id,
            )
            await writer.create_note(
                scope, await self._plan(scope, writer, entity_id, draft, private=done.private)
            )
            done.entities.append(entity_id)
            return entity_id, True
        tags = _cite(existing.tags, sources)
        if set(tags) == set(existing.tags):
            return entity_id, False
        await self._retag(scope, existing, tags, existing.importance)
        return entity_id, True

    async def _session(
        self, scope: Scope, writer: HarvestWriter, thread_id: str, said: Sequence[Said], done: Harvest
    ) -> str | None:
        """The session's node (``entity:session``): named by its first request, made once."""
        first = next((t for t in said if t.role == "user" and len(content_words(prose(t.text))) >= 2), None)
        session_id = stable_id(scope, "session", thread_id)
        if await self._graph.get_notes(scope, [session_id]):
            return session_id
        if first is None:
            return None
        text = " ".join(prose(first.text).split())
        draft = NoteDraft(
            content=f"Session {thread_id}: {text[:160]}{'…' if len(text) > 160 else ''}",
            type=NoteType.CONCEPT,
            tags=[CAPTURED, "entity:session", f"{SOURCE_TAG}{first.id}"],
            importance=ENTITY_IMPORTANCE,
            thread_id=thread_id,
        )
        await writer.create_note(
            scope, await self._plan(scope, writer, session_id, draft, private=done.private)
        )
        done.entities.append(session_id)
        return session_id


def _names(text: str, entity: Entity) -> bool:
    """Whether ``text`` names ``entity`` (a note links to the entities it speaks of)."""
    name = entity.name.lower()
    return name in text.lower()
