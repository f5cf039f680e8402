"""What a prompt gets injected: the memories that strongly match it, cited, within budget.

A prompt is recalled whole, and each of its questions again over the notes (a part
matches its memory far better than the whole does). A hit clears one bar, once: its
``match`` at least ``min_match`` (a note stating a decision, rule, preference or fact:
``min_note_match``, a note being short, distilled and current) and, when the prompt names
someone or something, a text that names it too unless the match is very strong. Never this
session's own turns (the model has them), filler, the prompt itself, or a text twice.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path

import anyio

from hybrid_memory.models import MemoryKind, RecallHit, RecallResult, Scope
from hybrid_memory.service.recall import RecallOptions
from hybrid_memory.text.citation import HOW_TO_CITE
from hybrid_memory.text.filler import is_filler
from hybrid_memory.text.repeats import Distinct
from hybrid_memory.text.words import normalized

MIN_PROMPT_WORDS = 3
"""Shorter prompts ("yes", "go on", "thanks") carry no question worth a recall."""
HITS = 8
NOTES_PER_QUESTION = 4
"""Notes recalled for each question of a prompt (entities among them are dropped unless strong)."""
MAX_PARTS = 3
VERY_STRONG_MATCH = 0.8
"""A hit matching this well is injected even when it does not repeat the prompt's names."""
HEADER = f"Possibly relevant memory from earlier sessions ({HOW_TO_CITE}; read_memory gives more):"
_PARTS = re.compile(
    r"\?+\s*|;\s*|,\s*(?:and|but|also|plus)\s+"
    r"|\s+and\s+(?=(?:which|what|where|when|how|who|why|can|could|should|do|does|is|are)\b)",
    re.IGNORECASE,
)
"""Where a prompt asking several things divides: after a question mark, a semicolon, ", and"."""
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]+")
_WORDS = re.compile(r"[\w'-]+")
_NOT_NAMES = frozenset(
    " ".join(
        (
            "i i'm i've i'd i'll a an the what when where who whom whose which why how is are was were",
            "do does did can could would should will shall may might must have has had be been this that",
            "these those there here it its if in on at of for to from with by and or but not no yes please",
            "tell give show",
            "list find remember my our your their his her we you they he she me us them also then so as any",
            "all some monday tuesday wednesday thursday friday saturday sunday january february march april",
            "june july august september october november december today yesterday tomorrow ok okay thanks",
        )
    ).split()
)
_LABEL_WORDS = 4
"""A hit that is the prompt plus fewer words than this ("Asked: …") only repeats the question."""
_STATED = ("decision", "preference", "fact")

Recall = Callable[[Scope, str, RecallOptions], Awaitable[RecallResult]]


def worth_asking(prompt: str) -> bool:
    return len(prompt.split()) >= MIN_PROMPT_WORDS and not prompt.lstrip().startswith("/")


def prompt_parts(prompt: str) -> list[str]:
    """The questions of a prompt that asks several ("can I …, and which …?"), each recalled on its
    own. One part for most prompts."""
    parts = [p.strip() for p in _PARTS.split(prompt[:2000]) if len(p.split()) >= MIN_PROMPT_WORDS]
    return parts[:MAX_PARTS] if len(parts) > 1 else [prompt[:2000]]


def stated(hit: RecallHit) -> bool:
    """A note stating a decision, rule, preference or fact (not an entity, a question or a concept)."""
    return hit.kind is MemoryKind.NOTE and hit.note_type is not None and hit.note_type.value in _STATED


def _word(word: str) -> str:
    return word.lower().removesuffix("'s").strip("'-")


def anchors(prompt: str) -> set[str]:
    """The names a prompt is about: capitalised words that are not a question word, pronoun or date."""
    return {_word(w) for w in _CAPITALISED.findall(prompt)} - _NOT_NAMES


def clears(hit: RecallHit, named: set[str], min_match: float, min_note_match: float) -> bool:
    """The one bar a hit clears to be injected unasked: its match, and the prompt's names.

    A prompt about a person, a project or a tool that the memory has never mentioned is about
    something else; memories that merely resemble it in meaning are what a model is misled by.
    """
    if hit.match < (min_note_match if stated(hit) else min_match):
        return False
    if named and hit.match < VERY_STRONG_MATCH:
        return bool(named & {_word(w) for w in _WORDS.findall(hit.text)})
    return True


async def candidates(
    recall: Recall,
    scope: Scope,
    prompt: str,
    *,
    session_id: str | None,
    work_tree: Path | None,
    min_match: float,
    min_note_match: float,
) -> list[RecallHit]:
    """The hits for ``prompt`` that clear the bar, each once (its best match), never this session's.

    The recalls run at once (one waits on the store while another ranks); their hits are taken in
    the order the recalls are listed, as if they had run one after the other.
    """
    named = anchors(prompt)
    asked = [
        (prompt[:2000], RecallOptions(limit=HITS, min_score=min_match, context=False, work_tree=work_tree))
    ]
    if min_note_match < min_match:
        notes = RecallOptions(
            limit=NOTES_PER_QUESTION,
            kinds=[MemoryKind.NOTE],
            min_score=min_note_match,
            context=False,
            work_tree=work_tree,
        )
        asked += [(part, notes) for part in prompt_parts(prompt)]
    results: list[RecallResult | None] = [None] * len(asked)

    async def ask(i: int, query: str, options: RecallOptions) -> None:
        results[i] = await recall(scope, query, options)

    async with anyio.create_task_group() as tg:
        for i, (query, options) in enumerate(asked):
            tg.start_soon(ask, i, query, options)
    found: dict[str, RecallHit] = {}
    for result in results:
        assert result is not None
        for hit in result.results:
            if hit.thread_id == session_id or not clears(hit, named, min_match, min_note_match):
                continue
            if hit.id not in found or hit.match > found[hit.id].match:
                found[hit.id] = hit
    return list(found.values())


def _telling(hit: RecallHit) -> int:
    return 0 if hit.kind not in (MemoryKind.SUMMARY, MemoryKind.NOTE) else 1 if stated(hit) else 2


def worth_showing(hits: Sequence[RecallHit], prompt: str) -> list[RecallHit]:
    """``hits`` without filler, concepts, the prompt itself (asked before: its answer is what helps,
    not the question under a label such as "Asked:") and a text already shown above it."""
    distinct = Distinct(prompt)
    asked = normalized(prompt)
    shown = []
    # The turns themselves first: a digest or a note is a second telling, an entity ("File x") a name.
    for hit in sorted(hits, key=_telling):
        if hit.kind is MemoryKind.NOTE and hit.note_type is not None and hit.note_type.value == "concept":
            continue
        flat = normalized(hit.text)
        if is_filler(hit.text) or (asked and len(flat.replace(asked, " ").split()) < _LABEL_WORDS):
            continue
        if distinct.new(hit.text):
            shown.append(hit)
    return shown


def label(hit: RecallHit) -> str:
    """``2026-11-20, decision``: when, and what it is (a note's type, a turn's role, a summary)."""
    who = (hit.note_type.value if hit.note_type else None) or hit.role or hit.kind.value
    return ", ".join(x for x in (hit.created_at.date().isoformat(), who) if x)
