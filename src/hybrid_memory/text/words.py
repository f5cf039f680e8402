"""Words, sentences, a text as a reader compares it, and a text cut to a length."""

from __future__ import annotations

import re

WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NOT_WORD = re.compile(r"[^\w' ]+")


def words(text: str) -> list[str]:
    """Lower-cased words of ``text``."""
    return [w.lower() for w in WORD.findall(text)]


def sentences(text: str) -> list[str]:
    """The sentences of ``text``, spacing folded: split after ".", "!" or "?"."""
    flat = " ".join(text.split())
    return [s for s in SENTENCE_END.split(flat) if s]


def normalized(text: str) -> str:
    """``text`` compared as a reader would: case, punctuation and spacing ignored."""
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


def cut(text: str, max_chars: int) -> str:
    """``text`` on one line, cut to ``max_chars`` with "…" where it was cut."""
    flat = " ".join(text.split())
    return flat if len(flat) <= max_chars else flat[: max_chars - 1].rstrip() + "…"
