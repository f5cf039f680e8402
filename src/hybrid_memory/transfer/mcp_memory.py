"""Read the MCP reference memory server's ``memory.jsonl`` as notes and links.

That server (``@modelcontextprotocol/server-memory``) keeps a knowledge graph as JSON
Lines: ``{"type": "entity", "name", "entityType", "observations": [...]}`` and
``{"type": "relation", "from", "to", "relationType"}``. Here:

- an entity becomes a ``concept`` note, ``"<name> (<entityType>)"``, tagged with its type;
- each observation a ``fact`` note, linked to its entity's note by ``part_of``;
- a relation a link between the two entities' notes, its free-text ``relationType``
  mapped to our closed :class:`~hybrid_memory.models.Relation` by :data:`RELATION_MAP`,
  else ``relates_to``; when it was not one of ours verbatim, the source note is tagged
  ``rel:<relationType>`` so the original word is kept.

Ids are uuid5 of the scope and the entity name (and observation text), so importing
the same file twice writes the same notes. Timestamps are the file's modification
time, for the same reason. A relation naming an entity the file does not define
(the reference server does not check) gets a placeholder concept note.
"""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from hybrid_memory.models import Link, Note, NoteType, Relation, Scope
from hybrid_memory.transfer.format import MAX_PROBLEMS, ImportFileError, describe, read_lines

_NAMESPACE = uuid.UUID("0b9c4f2e-5d1a-4c7e-8f3b-2a6d9e1c7b40")
MAX_TAG_CHARS = 64

RELATION_MAP: dict[str, Relation] = {
    **{relation.value: relation for relation in Relation},
    "related_to": Relation.RELATES_TO,
    "relates": Relation.RELATES_TO,
    "associated_with": Relation.RELATES_TO,
    "is_part_of": Relation.PART_OF,
    "belongs_to": Relation.PART_OF,
    "member_of": Relation.PART_OF,
    "is_a": Relation.EXAMPLE_OF,
    "instance_of": Relation.EXAMPLE_OF,
    "is_example_of": Relation.EXAMPLE_OF,
    "builds_on": Relation.EXTENDS,
    "based_on": Relation.EXTENDS,
    "conflicts_with": Relation.CONTRADICTS,
    "replaces": Relation.SUPERSEDES,
    "is_supported_by": Relation.SUPPORTS,
    "evidence_for": Relation.SUPPORTS,
    "answer_to": Relation.ANSWERS,
    "is_caused_by": Relation.CAUSED_BY,
    "due_to": Relation.CAUSED_BY,
    "results_from": Relation.CAUSED_BY,
    "precedes": Relation.TEMPORAL,
    "follows": Relation.TEMPORAL,
    "before": Relation.TEMPORAL,
    "after": Relation.TEMPORAL,
}
"""Normalised ``relationType`` (lower case, spaces and hyphens as ``_``) -> our relation.

Only mappings that keep the link's direction: "A causes B" would need B -> A, so it
stays ``relates_to`` (tagged) rather than being turned around silently.
"""


class _Entity(BaseModel):
    model_config = ConfigDict(extra="ignore")

    type: Literal["entity"]
    name: str = Field(min_length=1)
    entityType: str = ""  # the reference server's field name
    observations: list[str] = Field(default_factory=list)


class _Relation(BaseModel):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)

    type: Literal["relation"]
    from_: str = Field(alias="from", min_length=1)
    to: str = Field(min_length=1)
    relationType: str = Field(min_length=1)  # the reference server's field name


def _normalise(relation_type: str) -> str:
    return re.sub(r"[\s\-]+", "_", relation_type.strip().lower())


def map_relation(relation_type: str) -> tuple[Relation, str | None]:
    """Our relation for a ``relationType``, and the tag keeping the original when it was not ours."""
    key = _normalise(relation_type)
    relation = RELATION_MAP.get(key, Relation.RELATES_TO)
    if key == relation.value:
        return relation, None
    return relation, f"rel:{key}"[:MAX_TAG_CHARS]


def looks_like_mcp_memory(first_line: str) -> bool:
    """True when a file's first line is an entity or relation of the reference server."""
    try:
        data = json.loads(first_line)
    except json.JSONDecodeError:
        return False
    return isinstance(data, dict) and data.get("type") in ("entity", "relation") and "format" not in data


def _id(scope: Scope, *parts: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join((scope.project, scope.user, *parts))))


def read_mcp_memory(path: Path, scope: Scope) -> tuple[list[Note], list[Link]]:
    """The notes and links of a ``memory.jsonl``, or ``ImportFileError`` naming each bad line."""
    entities: dict[str, _Entity] = {}
    relations: list[_Relation] = []
    problems: list[str] = []
    bad = 0
    for number, text in read_lines(path):
        try:
            data = json.loads(text)
            kind = data.get("type") if isinstance(data, dict) else None
            if kind == "entity":
                entity = _Entity.model_validate(data)
                known = entities.get(entity.name)
                if known is None:
                    entities[entity.name] = entity
                else:  # the same entity twice: keep every observation once
                    merged = list(dict.fromkeys([*known.observations, *entity.observations]))
                    entities[entity.name] = known.model_copy(update={"observations": merged})
            elif kind == "relation":
                relations.append(_Relation.model_validate(data))
            else:
                raise ValueError(f"unknown type {kind!r}; memory.jsonl lines are entities or relations")
        except json.JSONDecodeError as exc:
            problem = f"line {number}: not valid JSON ({exc.msg} at column {exc.colno})"
        except ValidationError as exc:
            problem = f"line {number}: {describe(exc)}"
        except ValueError as exc:
            problem = f"line {number}: {exc}"
        else:
            continue
        bad += 1
        if len(problems) < MAX_PROBLEMS:
            problems.append(problem)
    if problems:
        raise ImportFileError(path, problems, bad - len(problems))

    when = datetime.fromtimestamp(path.stat().st_mtime, UTC)
    notes: dict[str, Note] = {}
    links: dict[tuple[str, str, Relation], Link] = {}
    extra_tags: dict[str, set[str]] = {}

    def entity_note(name: str, entity_type: str) -> str:
        note_id = _id(scope, "entity", name)
        if note_id not in notes:
            content = f"{name} ({entity_type})" if entity_type else name
            tags = [entity_type[:MAX_TAG_CHARS]] if entity_type.strip() else []
            notes[note_id] = Note.new(scope, note_id, content, NoteType.CONCEPT, when, tags=tags)
        return note_id

    def link(from_id: str, to_id: str, relation: Relation) -> None:
        links[(from_id, to_id, relation)] = Link.new(scope, from_id, to_id, relation, when)

    for entity in entities.values():
        entity_id = entity_note(entity.name, entity.entityType.strip())
        for observation in entity.observations:
            if not observation.strip():
                continue
            fact_id = _id(scope, "observation", entity.name, observation)
            notes[fact_id] = Note.new(scope, fact_id, observation.strip(), NoteType.FACT, when)
            link(fact_id, entity_id, Relation.PART_OF)
    for rel in relations:
        from_id = entity_note(rel.from_, "")
        to_id = entity_note(rel.to, "")
        if from_id == to_id:
            continue  # a link joins two different notes
        relation, tag = map_relation(rel.relationType)
        link(from_id, to_id, relation)
        if tag is not None:
            extra_tags.setdefault(from_id, set()).add(tag)
    for note_id, tags in extra_tags.items():
        note = notes[note_id]
        notes[note_id] = note.model_copy(update={"tags": sorted({*note.tags, *tags})})
    return list(notes.values()), list(links.values())
