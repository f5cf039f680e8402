"""Repeats: a text that says again what was said (a question asked in three sessions is shown once)."""

from __future__ import annotations

from hybrid_memory.text.words import normalized

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
