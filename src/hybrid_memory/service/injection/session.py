"""What a new session is told first: the project's notes in force, the last session's digest, core.

Each section is a function of its own (what it finds, as cited lines); :func:`assemble`
fits them to the budget, each within its share first. Every line cites its memory; no
text is shown twice; nothing superseded is shown.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hybrid_memory.backends.base import VectorStore
from hybrid_memory.models import Memory, MemoryContext, MemoryFilter, MemoryKind, Scope
from hybrid_memory.service._pages import pages
from hybrid_memory.service.injection.render import Count, line, one_line, sections
from hybrid_memory.service.knowledge.thread_summary import SOURCE as THREAD_SUMMARY
from hybrid_memory.text.citation import HOW_TO_CITE, cite
from hybrid_memory.text.repeats import Distinct

CONTEXT_QUERY = "decisions, preferences, conventions and facts about this project"
HEADER = f"Long-term memory of this project ({HOW_TO_CITE}; read_memory gives more)."
NOTES_HEADER = "Rules and decisions in force (most important first):"
DIGEST_HEADER = "The most recent session:"
CORE_HEADER = "Pinned:"
SHARES = (0.55, 0.3, 0.15)
"""Of the budget, what notes, the digest and core memory get first (then what is left, in order)."""
_DIGEST_LABEL = re.compile(r"^[A-Z][a-z]+: ")
_DIGEST_PARTS = re.compile(r";\s+|\s+\|\s+")
"""Where a digest line joins its items: "a; b" (decisions, changes), "a | b" (requests)."""
_DIGEST_ORDER = {"asked": 0, "open": 1, "changed": 2, "decided": 3}


def note_lines(context: MemoryContext, distinct: Distinct) -> list[str]:
    """The project's current decisions, rules, preferences and facts, most important first."""
    return [line(n.id, n.text, n.role or "note") for n in context.notes if distinct.new(n.text)]


def core_lines(context: MemoryContext, distinct: Distinct) -> list[str]:
    """The pinned memories."""
    return [line(c.id, c.text) for c in context.core if distinct.new(c.text)]


async def last_digest(vectors: VectorStore, scope: Scope, session_id: str | None) -> Memory | None:
    """The digest of the project's most recent session other than ``session_id`` (its thread summary,
    dated by the session's last turn); None before any."""
    latest: Memory | None = None
    flt = MemoryFilter(scope=scope, kinds=[MemoryKind.SUMMARY])
    async for page in pages(vectors, flt):
        for memory in page:
            if memory.source != THREAD_SUMMARY or memory.thread_id in (None, session_id):
                continue
            if latest is None or memory.created_at > latest.created_at:
                latest = memory
    return latest


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
        parts = [p for p in _DIGEST_PARTS.split(body) if p.strip() and not distinct.retold(p)]
        if not parts:
            continue
        dated = f"({date}) " if not lines else ""
        text = f"{label}: {'; '.join(parts)}" if label else "; ".join(parts)
        lines.append(f"- {cite(digest.id)} {dated}{one_line(text)}")
    return lines


def assemble(
    notes: Sequence[str], digest: Sequence[str], core: Sequence[str], budget: int, count: Count
) -> str:
    """The sections within ``budget`` tokens under one header; empty when nothing fits."""
    body = budget - count(HEADER) - 2
    shown = sections(
        [(NOTES_HEADER, list(notes)), (DIGEST_HEADER, list(digest)), (CORE_HEADER, list(core))],
        body,
        SHARES,
        count,
    )
    if not shown:
        return ""
    return HEADER + "\n\n" + "\n\n".join("\n".join([h, *lines]) for h, lines in shown)
