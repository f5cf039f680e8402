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
from hybrid_memory.service.knowledge._text import STOPWORDS, content_words
from hybrid_memory.text.values import change
from hybrid_memory.text.words import words

DUPLICATE_SIMILARITY = 0.85
"""At least this close (cosine) with no differing values: the same note written twice."""
CHANGE_SIMILARITY = 0.65
"""At least this close with differing values on both sides: a newer value for the same thing."""

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?|\d+(?:[.,:/]\d+)*")


def _values(text: str, *, openers: bool) -> set[str]:
    """Numbers and capitalised words, lower-cased; ``openers``: with a sentence's first word too."""
    found: set[str] = set()
    for match in _TOKEN.finditer(text):
        token, value = match.group(), match.group().lower()
        opener = not text[: match.start()].rstrip() or text[: match.start()].rstrip().endswith(
            (".", "!", "?")
        )
        if (
            token[:1].isdigit() or (token[:1].isupper() and (openers or not opener))
        ) and value not in STOPWORDS:
            found.add(value)
    return found


def values(text: str) -> set[str]:
    """The specific values of a text: numbers and capitalised words (a capital opening a sentence too)."""
    return _values(text, openers=True)


def subject(text: str) -> str | None:
    """The capitalised word a text opens with ("Alice lives in Porto": alice); None for a generic one."""
    tokens: list[str] = _TOKEN.findall(text)
    if not tokens or not tokens[0][:1].isupper() or tokens[0].lower() in STOPWORDS:
        return None
    return tokens[0].lower()


def same_subject(a: str, b: str) -> bool:
    """Not plainly about two different named things ("Alice ..." / "Bob ...")."""
    sa, sb = subject(a), subject(b)
    return sa is None or sb is None or sa in words(b) or sb in words(a)


def changed_value(old: str, new: str) -> bool:
    """Same subject, and each names a value (past its opening word) the other lacks; or the two are
    alike word for word but for a value or a negation (:func:`.values.change`)."""
    a, b = _values(old, openers=False) - values(new), _values(new, openers=False) - values(old)
    return (bool(a) and bool(b) and same_subject(old, new)) or change(old, new) is not None


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
    if similarity >= DUPLICATE_SIMILARITY and same_subject(older.content, newer.content):
        # The older note has had longer to gather links; the duplicate folds into it.
        return Verdict("merge", keep=older, drop=newer)
    return None


_GENERIC = frozenset(("use", "using", "set", "let", "make", "keep", "never", "always", "must", "should"))


def same_topic(old: str, new: str) -> bool:
    """Whether two statements share a word that is neither a value nor a generic verb ("token", "billing").

    "We use Postgres 16 for billing" and "We use Redis 7 for the cache" differ in values but speak
    of two things; "Set the token TTL to 15 minutes" and "… to 30 minutes" speak of one.
    """
    shared = set(content_words(old)) & set(content_words(new))
    return bool(shared - values(old) - values(new) - _GENERIC)
