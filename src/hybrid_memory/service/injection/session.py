"""What a new session is told first: the project's notes in force, the last session's digest, the
goals of the sessions before it, core.

Each section is a function of its own (what it finds, as cited lines); :func:`assemble`
fits them to the budget, each within its share first. Every line cites its memory; no
text is shown twice; nothing superseded is shown.
"""

from __future__ import annotations

import heapq
import re
from collections.abc import Mapping, Sequence

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.models import Memory, MemoryContext, MemoryFilter, MemoryKind, NoteFilter, Scope
from hybrid_memory.service._pages import pages
from hybrid_memory.service.injection.render import Count, line, one_line, sections
from hybrid_memory.service.knowledge.statements.cues import certainty
from hybrid_memory.service.knowledge.thread_summary import SOURCE as THREAD_SUMMARY
from hybrid_memory.text.citation import HOW_TO_CITE, cite
from hybrid_memory.text.junk import junk
from hybrid_memory.text.repeats import Distinct

CONTEXT_QUERY = "decisions, preferences, conventions and facts about this project"
HEADER = f"Long-term memory of this project ({HOW_TO_CITE}; read_memory gives more)."
NOTES_HEADER = "Rules and decisions in force (most important first):"
DIGEST_HEADER = "The most recent session:"
EARLIER_HEADER = "Sessions before it:"
CORE_HEADER = "Pinned:"
SHARES = (0.5, 0.27, 0.1, 0.13)
"""Of the budget, what notes, the last digest, the earlier sessions' goals and core memory get first
(then what is left, in order)."""
MIN_CLASSIFIED = 0.97
"""A note the statement classifier drew with no cue is shown from this probability. On the labelled
dev sessions, each project scored by a classifier trained without it: 12 of 12 such notes right at
0.97 (15 of 19 at the finder's own 0.93), keeping 12 of its 15 right notes."""
EARLIER_SESSIONS = 2
"""The sessions before the most recent one whose goal is shown (one line each)."""
EARLIER_CHARS = 160
"""An earlier session's goal is cut here: enough to say what it was for; the citation reads the rest."""
_GOAL_LABELS = ("goal", "asked")
_DIGEST_LABEL = re.compile(r"^[A-Z][a-z]+: ")
_DIGEST_PARTS = re.compile(r";\s+|\s+\|\s+")
"""Where a digest line joins its items: "a; b" (decisions, changes), "a | b" (requests)."""
_DIGEST_ORDER = {"goal": 0, "asked": 0, "open": 1, "changed": 2, "decided": 3}


def note_lines(
    context: MemoryContext, distinct: Distinct, sure: Mapping[str, float] | None = None
) -> list[str]:
    """The project's current decisions, rules, preferences and facts, most important first; of those
    the statement classifier drew alone (``sure``: note id -> its probability), only the confident."""
    return [
        line(n.id, n.text, n.role or "note")
        for n in context.notes
        if (sure or {}).get(n.id, 1.0) >= MIN_CLASSIFIED
        and junk(n.text) is None  # stored before the junk filter: checked again
        and distinct.new(n.text)
    ]


async def certainties(graph: GraphStore, scope: Scope, context: MemoryContext) -> dict[str, float]:
    """How sure the finder was of each of the context's notes (1.0: stated by a person or a cue)."""
    if not context.notes:
        return {}
    return {n.id: certainty(n.tags) for n in await graph.get_notes(scope, [n.id for n in context.notes])}


def core_lines(context: MemoryContext, distinct: Distinct) -> list[str]:
    """The pinned memories."""
    return [line(c.id, c.text) for c in context.core if distinct.new(c.text)]


async def recent_digests(
    vectors: VectorStore, scope: Scope, session_id: str | None, count: int
) -> list[Memory]:
    """The digests of the project's ``count`` most recent sessions other than ``session_id``, newest
    first (a session's digest is dated by its last turn)."""
    latest: list[Memory] = []
    flt = MemoryFilter(scope=scope, kinds=[MemoryKind.SUMMARY])
    async for page in pages(vectors, flt):
        digests = [m for m in page if m.source == THREAD_SUMMARY and m.thread_id not in (None, session_id)]
        latest = heapq.nlargest(count, [*latest, *digests], key=lambda m: m.created_at)
    return latest


def _plain(text: str) -> str:
    return " ".join(text.lower().split()).rstrip(".")


async def superseded(graph: GraphStore, scope: Scope, digests: Sequence[Memory]) -> list[str]:
    """What the sessions of ``digests`` stated that a later note has since closed: their goals must
    not bring it back."""
    closed: list[str] = []
    for digest in digests:
        if digest.thread_id:
            notes = await graph.list_notes(NoteFilter(scope=scope, thread_id=digest.thread_id), limit=200)
            closed += [_plain(n.content) for n in notes if n.valid_to is not None and n.content.strip()]
    return closed


def goal_line(digest: Memory, distinct: Distinct, closed: Sequence[str] = ()) -> str | None:
    """One short cited line of what an earlier session set out to do (its digest's Goal), dated; None
    when its digest has no goal worth showing, one shown above already, or one that states what a
    later note superseded (``closed``)."""
    for row in digest.text.splitlines():
        label, _, body = row.strip().partition(": ")
        if label.lower() not in _GOAL_LABELS or not body.strip():
            continue
        first = _DIGEST_PARTS.split(body)[0].strip()
        if not first or junk(first) is not None or any(c in _plain(first) for c in closed):
            return None
        if not distinct.new(first):
            return None
        date = digest.created_at.date().isoformat()
        return f"- {cite(digest.id)} ({date}) {one_line(first, EARLIER_CHARS)}"
    return None


def earlier_lines(digests: Sequence[Memory], distinct: Distinct, closed: Sequence[str] = ()) -> list[str]:
    """The goal line of each earlier session (newest first), those with one."""
    return [g for g in (goal_line(d, distinct, closed) for d in digests) if g is not None]


def digest_lines(digest: Memory | None, distinct: Distinct) -> list[str]:
    """A cited line each of what the session asked, left open, changed and decided; what is shown
    above already (a decision that is a note) is left out."""
    if digest is None:
        return []
    date = digest.created_at.date().isoformat()
    rows = [" ".join(r.split()) for r in digest.text.splitlines() if r.strip()]
    rows.sort(key=lambda r: _DIGEST_ORDER.get(r.split(":", 1)[0].lower(), 4))
    lines: list[str] = []
    for row in rows:
        label, _, body = row.partition(": ") if _DIGEST_LABEL.match(row) else ("", "", row)
        parts = [
            p for p in _DIGEST_PARTS.split(body) if p.strip() and junk(p) is None and not distinct.retold(p)
        ]
        if not parts:
            continue
        dated = f"({date}) " if not lines else ""
        text = f"{label}: {'; '.join(parts)}" if label else "; ".join(parts)
        lines.append(f"- {cite(digest.id)} {dated}{one_line(text)}")
    return lines


def assemble(
    notes: Sequence[str],
    digest: Sequence[str],
    core: Sequence[str],
    budget: int,
    count: Count,
    earlier: Sequence[str] = (),
) -> str:
    """The sections within ``budget`` tokens under one header; empty when nothing fits."""
    body = budget - count(HEADER) - 2
    shown = sections(
        [
            (NOTES_HEADER, list(notes)),
            (DIGEST_HEADER, list(digest)),
            (EARLIER_HEADER, list(earlier)),
            (CORE_HEADER, list(core)),
        ],
        body,
        SHARES,
        count,
    )
    if not shown:
        return ""
    return HEADER + "\n\n" + "\n\n".join("\n".join([h, *lines]) for h, lines in shown)
