"""Which notes say the same thing, and which say a changed thing: pure decisions over similar pairs.

Near-duplicates are found by embedding similarity. A contradiction without a model is hard to
see, so the heuristic is conservative: two notes of one type, close in meaning, whose specific
values differ on both sides (a number, a date, a name the other lacks: "Alice lives in Lisbon"
/ "Alice lives in Porto"). Anything less is left alone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hybrid_memory.models import Note
from hybrid_memory.service.knowledge._text import STOPWORDS

DUPLICATE_SIMILARITY = 0.85
"""At least this close (cosine) with no differing values: the same note written twice."""
CHANGE_SIMILARITY = 0.7
"""At least this close with differing values on both sides: a newer value for the same thing."""

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?|\d+(?:[.,:/]\d+)*")


SUBJECT_TOKENS = 3
"""A value among a text's first words names what the text is about."""


def values(text: str) -> list[str]:
    """The specific values of a text in order: numbers and capitalised words (lower-cased)."""
    found: list[str] = []
    for token in _TOKEN.findall(text):
        value = token.lower()
        if (token[:1].isupper() or token[:1].isdigit()) and value not in STOPWORDS and value not in found:
            found.append(value)
    return found


def subject(text: str) -> str | None:
    """The value a text opens with (\"Alice lives in Porto\": alice); None for a generic subject."""
    opening = [t.lower() for t in _TOKEN.findall(text)[:SUBJECT_TOKENS]]
    return next((v for v in values(text) if v in opening), None)


def changed_value(old: str, new: str) -> bool:
    """Same subject, and each text holds a value the other lacks: the newer one changes the older."""
    a, b = set(values(old)), set(values(new))
    return bool(a - b) and bool(b - a) and subject(old) == subject(new)


@dataclass(frozen=True)
class Verdict:
    action: str
    """``merge``: a duplicate; ``supersede``: the newer note changes the older."""
    keep: Note
    drop: Note


def judge(a: Note, b: Note, similarity: float) -> Verdict | None:
    """What to do with two live notes of a project, or None to leave them be."""
    if a.type is not b.type or similarity < CHANGE_SIMILARITY:
        return None
    older, newer = sorted((a, b), key=lambda n: (n.created, n.id))
    if changed_value(older.content, newer.content):
        return Verdict("supersede", keep=newer, drop=older)
    if similarity >= DUPLICATE_SIMILARITY and set(values(older.content)) == set(values(newer.content)):
        # The older note has had longer to gather links; the duplicate folds into it.
        return Verdict("merge", keep=older, drop=newer)
    return None
