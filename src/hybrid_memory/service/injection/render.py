"""How an injection reads: one cited line per memory, sections fitted to a token budget.

Tokens are counted with the model's own tokenizer (the counter the tools use for
``max_tokens``): the model pays for every injected token in every later request of the session.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hybrid_memory import codestate
from hybrid_memory.text.citation import cite

Count = Callable[[str], int]
"""Tokens in a text, as the tools count them (the embedding model's tokenizer)."""

HIT_CHARS = 400
"""A recalled item is cut here: enough for a fact or a decision; the citation reads the rest."""


def one_line(text: str, limit: int = HIT_CHARS) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def line(memory_id: str, text: str, label: str = "") -> str:
    """``- [memory:<id>] (label) text``, the text on one line and cut at :data:`HIT_CHARS`."""
    labelled = f"({label}) " if label else ""
    return f"- {cite(memory_id)} {labelled}{one_line(text)}"


def code_note(line: str, changed: Sequence[str], branch: str | None) -> str:
    """``line`` and what changed since in the caller's work tree, when something did."""
    note = codestate.note(list(changed), branch)
    return f"{line} {note}" if note else line


def fit(header: str, lines: Sequence[str], budget: int, count: Count) -> tuple[str, int]:
    """The header and as many lines as fit in ``budget`` tokens, in order, and how many lines;
    ``("", 0)`` when none fits."""
    kept: list[str] = []
    used = count(header)
    for line in lines:
        cost = count(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return ("\n".join([header, *kept]), len(kept)) if kept else ("", 0)


Section = tuple[str, list[str]]
"""A header and its lines."""


def sections(parts: Sequence[Section], budget: int, shares: Sequence[float], count: Count) -> list[Section]:
    """Each section's lines within its share of ``budget`` first, then what is left over in order;
    the sections left with a line."""
    kept: list[list[str]] = [[] for _ in parts]
    used = 0

    def take(i: int, cap: int) -> None:
        nonlocal used
        header, lines = parts[i]
        for line in lines[len(kept[i]) :]:
            cost = count(line) + 1 + (0 if kept[i] else count(header) + 2)
            if used + cost > cap or used + cost > budget:
                return
            kept[i].append(line)
            used += cost

    for i, share in enumerate(shares):
        take(i, used + int(budget * share))
    for i in range(len(parts)):
        take(i, budget)
    return [(parts[i][0], kept[i]) for i in range(len(parts)) if kept[i]]
