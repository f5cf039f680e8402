"""Whether a text asks: one detector for prose, one for a clause in any of seven languages, and the
stricter turn tests recall ranks with.

:func:`asks` reads a person's message (a prompt, a session's last turn): a sentence that ends
in "?", or one with no end mark that opens as a question does. Recall's tests look at a
conversation turn's form only: :func:`ends_asking` (the turn ends in "?") and
:func:`only_asks` (it asks and states nothing of its own).
"""

from __future__ import annotations

import re

from hybrid_memory.text.words import sentences

_ASKING = frozenset(
    # English, Portuguese, Spanish, German
    """
    how what which where when why who whom whose
    como qual quais onde quando porque porquê quem
    cómo qué cuál cuáles dónde cuándo quién
    wie was welche welcher welches wo wann warum wer wieso weshalb
    """.split()  # noqa: SIM905 - a word list reads best as text
)
_AUXILIARY = re.compile(
    r"^(?:can|could|would|will|should|shall|may|do|does|did|is|are|was|were|have|has)"
    r" (?:you|we|i|it|they|he|she|this|that|there|the)\b",
    re.IGNORECASE,
)
_ANY_LANGUAGE = re.compile(
    r"[?\uff1f]\s*$|[?\uff1f]\s+\S"
    r"|^(?:how|what|why|which|when|where|who|whom|whose|can|could|would|will|shall|should|do|does|did|"
    r"is|are|was|were|have|has|am|may|might|isn't|aren't|doesn't|don't you|"
    r"como|cómo|por ?qu[eé]|qu[eé]|onde|dónde|quando|cuándo|qual|cuál|pode|puedes|podes|"
    r"pourquoi|comment|est-ce|quoi|quel|quelle|wie|warum|was|wo|wann|welche[rsn]?|kannst|können|"
    r"gibt es|ist das)\b"
    r"|(?:吗|呢|么|嗎|麼|哪|か|かな|の)\s*[。.]?$|^(?:为什么|為什麼|怎么|怎麼|什么|什麼|如何|是否|なぜ|どう|どこ|いつ|何)"
    r"|能不能|是不是|要不要|可不可以|會不會|会不会|有沒有|有没有",
    re.IGNORECASE,
)
"""A question in any of seven languages, by its mark, its first word or its particle."""
_TURN_SENTENCE = re.compile(r"[^.!?\n]+[.!?]*")
STATEMENT_WORDS = 5
"""A sentence of at least this many words that does not end in "?" states something ("Hey Mel!" does not)."""


def asks(text: str) -> bool:
    """True for a question: a sentence ending in a question mark, or one with no end mark that opens
    as a question does ("how do I run it", "can you check", "qual o comando"). A sentence ending in
    "." or "!" states or asks to do ("When you deploy, migrate first.", "Do not push to main.")."""
    for sentence in sentences(text):
        flat = sentence.strip().lstrip("¿¡\"'(")
        if flat.endswith("?"):
            return True
        if flat.endswith((".", "!", ":")):
            continue
        first = flat.split(maxsplit=1)
        if (first and first[0].lower().rstrip(",") in _ASKING) or _AUXILIARY.match(flat):
            return True
    return False


def asks_in_any_language(clause: str) -> bool:
    """Whether one clause asks, in English, Portuguese, Spanish, French, German, Chinese or Japanese:
    a question mark, a question word or auxiliary first, a question particle last. Broader than
    :func:`asks` (it reads no sentence ends): a clause cut out of a turn is read alone."""
    return _ANY_LANGUAGE.search(clause) is not None


def ends_asking(text: str) -> bool:
    """Whether a turn ends in "?" (what it says before may state something)."""
    return text.rstrip().endswith("?")


def only_asks(text: str) -> bool:
    """Whether a turn asks ("...?") without stating anything of its own."""
    if not ends_asking(text):
        return False
    for sentence in _TURN_SENTENCE.findall(text):
        stripped = sentence.strip()
        if not stripped.endswith("?") and len(stripped.split()) >= STATEMENT_WORDS:
            return False
    return True
