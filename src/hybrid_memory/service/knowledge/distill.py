"""Distilling a thread into notes: the instructions, the model's JSON, and provenance.

A model (the client's through sampling, or a configured one) answers DISTILL_SYSTEM with JSON
notes; an agent without either gets the same instructions as an MCP prompt and calls
create_note / create_link itself. Either way each note cites the message memories it came
from as ``src:<memory id>`` tags, so recall(tags=...) or the ids themselves lead back.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from hybrid_memory.models import Memory
from hybrid_memory.models.knowledge import Distillation, DistilledLink, DistilledNote
from hybrid_memory.service.chat import ChatModel
from hybrid_memory.settings import LifecycleSettings
from hybrid_memory.text.citation import cite
from hybrid_memory.text.words import cut

logger = logging.getLogger(__name__)

T = TypeVar("T", bound=BaseModel)

SOURCE_TAG = "src:"
MAX_LINE_CHARS = 1_000
MAX_TRANSCRIPT_CHARS = 40_000
MAX_NOTES = 60
MAX_ANSWER_TOKENS = 4_000

DISTILL_SYSTEM = """\
You turn a conversation into durable notes for an assistant's long-term memory. Extract:
- fact: something true about the user or their world ("Alice, the user's sister, lives in Porto")
- preference: what the user likes, wants or avoids
- decision: what was decided, with its reason when given
- concept: each person, project, place or thing the facts are about (one note per entity)
Each note is one self-contained sentence naming its subject (no "he", "it"). Skip chatter, \
questions and anything not stated in the messages. Cite the [memory:<id>] of every message \
a note comes from. Link each note to the concept notes it is about (part_of) and notes to \
each other where one supports, causes or extends another.
Answer with JSON only:
{"notes": [{"key": "n1", "type": "fact", "content": "...", "sources": ["<memory id>"]}],
 "links": [{"from_key": "n1", "to_key": "n2", "relation": "part_of"}]}"""

PROMPT_STEPS = """\
Then store them yourself:
1. For each note call create_note(content, type, thread_id="{thread_id}", \
tags=["src:<memory id>", ...]) citing the message memory ids it came from. A note that \
already exists comes back with duplicate=true: use that note's id.
2. Link notes to their concept notes with create_link(fact_id, concept_id, "part_of"), and \
other related notes with supports / caused_by / extends.
3. When a new note changes an older one (a new city, a new deadline), \
create_link(new_id, old_id, "supersedes"); recall_memory(kinds=["note"]) finds older notes."""


def source_tags(sources: Sequence[str]) -> list[str]:
    return [f"{SOURCE_TAG}{s}" for s in dict.fromkeys(sources)]


def transcript(messages: Sequence[Memory]) -> str:
    """The thread as lines the model can cite, cut to MAX_TRANSCRIPT_CHARS."""
    lines: list[str] = []
    used = 0
    for m in messages:
        line = f"{cite(m.id)} {m.role or 'user'}: {cut(m.text, MAX_LINE_CHARS)}"
        if lines and used + len(line) > MAX_TRANSCRIPT_CHARS:
            lines.append(f"(and {len(messages) - len(lines)} later messages not shown)")
            break
        lines.append(line)
        used += len(line)
    return "\n".join(lines)


def prompt_text(thread_id: str, messages: Sequence[Memory]) -> str:
    """The MCP prompt for agents whose client cannot sample: the material and how to store it."""
    return "\n\n".join(
        [
            DISTILL_SYSTEM.split("Answer with JSON only:")[0].rstrip(),
            PROMPT_STEPS.format(thread_id=thread_id),
            f"Thread {thread_id}:\n{transcript(messages)}",
        ]
    )


def _valid(kind: type[T], items: object) -> list[T]:
    """The items of a JSON list that validate as ``kind``; the rest are dropped."""
    found: list[T] = []
    for item in items if isinstance(items, list) else []:
        try:
            found.append(kind.model_validate(item))
        except ValidationError:
            continue
    return found


def parse(text: str, known_sources: set[str]) -> Distillation:
    """The model's JSON answer; malformed notes and links are dropped, unknown sources too."""
    start, end = text.find("{"), text.rfind("}")
    try:
        raw = json.loads(text[start : end + 1]) if 0 <= start < end else {}
    except json.JSONDecodeError:
        logger.warning("the distillation answer was not JSON; nothing distilled")
        return Distillation()
    raw = raw if isinstance(raw, dict) else {}
    notes = [
        n.model_copy(update={"sources": [s for s in n.sources if s in known_sources]})
        for n in _valid(DistilledNote, raw.get("notes"))
        if n.content.strip()
    ][:MAX_NOTES]
    keys = {n.key for n in notes}
    links = [
        lk
        for lk in _valid(DistilledLink, raw.get("links"))
        if lk.from_key in keys and lk.to_key in keys and lk.from_key != lk.to_key
    ]
    return Distillation(notes=notes, links=links)


@dataclass(frozen=True)
class DistillRequest:
    """What to ask a model: the same question for the client's model and a configured one."""

    system: str
    user: str
    max_tokens: int = MAX_ANSWER_TOKENS


def request(thread_id: str, messages: Sequence[Memory]) -> DistillRequest:
    return DistillRequest(system=DISTILL_SYSTEM, user=f"Thread {thread_id}:\n{transcript(messages)}")


async def ask_model(settings: LifecycleSettings, question: DistillRequest) -> str | None:
    """The configured OpenAI-compatible model's answer; None without one."""
    model = ChatModel.configured(settings)
    if model is None:
        return None
    return await model.answer(question.system, question.user, max_tokens=question.max_tokens, temperature=0.0)
