"""Filler and repeats: replies that carry nothing, and texts that say again what was said.

"Done.", "Checking.", "Let me look." tell a later session nothing; an injection that shows
the same text twice (a question asked in three sessions) pays for it twice. Stdlib only:
the hooks import it.
"""

from __future__ import annotations

import re

_FILLER = frozenset(
    " ".join(
        (
            "ok okay k done checking looking on it sure thanks thank you thx got it noted great",
            "perfect cool nice right fine understood will do one moment working on it let me look",
            "let me check let me see let me take a look let me look into it looking into it alright",
            "sounds good all good ok thanks ok thank you okay thanks continue go on go ahead",
            "feito pronto certo beleza obrigado obrigada valeu vale listo hecho gracias vale d'accord",
            "merci fait c'est fait erledigt danke fertig klar gut",
        )
    ).split(" ")
)
_PHRASES = frozenset(
    {
        "on it",
        "will do",
        "got it",
        "thank you",
        "one moment",
        "working on it",
        "let me look",
        "let me check",
        "let me see",
        "let me take a look",
        "let me look into it",
        "looking into it",
        "sounds good",
        "all good",
        "ok thanks",
        "ok thank you",
        "okay thanks",
        "go on",
        "go ahead",
        "c'est fait",
    }
)
_NOT_WORD = re.compile(r"[^\w' ]+")


def normalized(text: str) -> str:
    """``text`` compared as a reader would: case, punctuation and spacing ignored."""
    return " ".join(_NOT_WORD.sub(" ", text.lower()).split())


def is_filler(text: str) -> bool:
    """True for a message that carries nothing on its own: an acknowledgement or a "let me look"."""
    flat = normalized(text)
    if not flat:
        return True
    if len(flat.split()) > 6:
        return False
    return flat in _PHRASES or all(word in _FILLER for word in flat.split())


_ASKING = frozenset(
    [
        "how",
        "what",
        "which",
        "where",
        "when",
        "why",
        "who",
        "whom",
        "whose",
        "can",
        "could",
        "should",
        "would",
        "will",
        "do",
        "does",
        "did",
        "is",
        "are",
        "was",
        "were",
        "may",
        "shall",
    ]
)


def asks(text: str) -> bool:
    """True for a question: a question mark, or a first word that asks ("how do I …")."""
    words = normalized(text).split()
    return "?" in text or (bool(words) and words[0] in _ASKING)


_RETOLD_MIN_WORDS = 4
"""A shorter text ("make test") is too common to call a longer one that holds it a retelling."""


class Distinct:
    """Remembers the texts seen so far; :meth:`new` is True once per normalized text."""

    def __init__(self, *seen: str) -> None:
        self._seen = {normalized(t) for t in seen}

    def new(self, text: str) -> bool:
        key = normalized(text)
        if key in self._seen:
            return False
        self._seen.add(key)
        return True

    def retold(self, text: str) -> bool:
        """True when ``text`` holds a text seen so far whole, under a label or two ("Remember: …",
        "unanswered: …"); else it is remembered as seen and False."""
        key = normalized(text)
        if any(len(seen.split()) >= _RETOLD_MIN_WORDS and f" {seen} " in f" {key} " for seen in self._seen):
            return True
        return not self.new(text)
