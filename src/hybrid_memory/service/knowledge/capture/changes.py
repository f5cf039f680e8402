"""A move or a change said in passing: what it replaces, wherever in a sentence it is said.

"Heads-up: we moved billing from Postgres 16 to CockroachDB last week; the Postgres cluster is
gone.", "btw we switched the queue from RabbitMQ to SQS", "…, replaced Jest with Vitest", "Redis is
gone", "we no longer use Travis": each names an old value (and often the new one). The notes that
name the old value and speak of the same thing are superseded by what the sentence says.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hybrid_memory.service.knowledge._text import content_words
from hybrid_memory.service.knowledge.capture.consolidate import values
from hybrid_memory.text.words import sentences, words

_VERB = (
    r"(?:moved|moving|switched|switching|migrated|migrating|changed|changing|ported|porting|went|"
    r"upgraded|upgrading|downgraded|transitioned|converted|mudamos|migramos|trocamos|cambiamos|"
    r"migré|passé|umgestiegen|migriert|gewechselt)"
)
_VALUE = r"(?P<{name}>[`\w][\w .:+#/@`-]{{0,40}}?)"
_END = (
    r"(?=\s*(?:$|[,;:.!?)]|\s(?:last|this|next|yesterday|today|recently|already|now|because|since|so|and|but|"
)
_END += r"for|in|on|at|as|with|—|-)\b))"
_PATTERNS = (
    re.compile(
        rf"\b{_VERB}\b[^.;]{{0,60}}?\bfrom {_VALUE.format(name='old')} (?:to|onto|over to|into) "
        rf"{_VALUE.format(name='new')}{_END}",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?:replaced|replacing|swapped|swapping|substituted) {_VALUE.format(name='old')} "
        rf"(?:with|by|for) {_VALUE.format(name='new')}{_END}",
        re.IGNORECASE,
    ),
    re.compile(
        rf"\b(?:de|von) {_VALUE.format(name='old')} (?:para|a|à|vers|auf|zu|nach) "
        rf"{_VALUE.format(name='new')}{_END}",
        re.IGNORECASE,
    ),
    re.compile(
        rf"(?:^|[,;:]\s*|\b(?:the|our|and)\s){_VALUE.format(name='old')} (?:is|are) (?:gone|dead|retired)\b"
    ),
    re.compile(
        rf"\b(?:no longer|don't|do not|stopped) (?:use|uses|using|run|runs|running|on) "
        rf"{_VALUE.format(name='old')}{_END}",
        re.IGNORECASE,
    ),
)
_TRIGGER = re.compile(
    r"\b(?:from|replac\w*|swap\w*|substitut\w*|gone|dead|retired|longer|stopped|don't|do not|de|von)\b",
    re.IGNORECASE,
)
"""A word every change names: the patterns above run only on a sentence that has one (capture stays cheap)."""
_ARTICLE = re.compile(
    r"^(?:(?:the|our|a|an|o|os|el|la|los|le|les|der|die|das|fyi|btw|heads[- ]up|also|and|so|ok|note)"
    r"\b[,:]?\s+)+",
    re.IGNORECASE,
)
_CHANGE_WORDS = frozenset(
    """
    moved moving switched migrated changed replaced upgraded gone dead retired longer stopped use using
    uses run runs now from last week week month yesterday today recently
    """.split()  # noqa: SIM905 - a word list reads best as text
)


@dataclass(frozen=True)
class Move:
    """An old value a sentence says was replaced, and the new one when it names it."""

    old: str
    new: str | None
    topic: frozenset[str]
    """The sentence's words that are neither values nor the change itself ("billing")."""


def _value(raw: str | None) -> str | None:
    if raw is None:
        return None
    value = _ARTICLE.sub("", raw.strip(" `'\""))
    return value if len(value) >= 2 and len(value.split()) <= 5 else None


def named(value: str) -> list[str]:
    """The words of ``value`` that name it: its capitalised words, numbers and code; else all its words."""
    tokens = value.replace("`", " ").split()
    strong = [
        t for t in tokens if t[:1].isupper() or any(c.isdigit() for c in t) or any(c in t for c in "./_")
    ]
    return strong or tokens


def moves(sentence: str) -> list[Move]:
    """The changes ``sentence`` states, each with the old value it replaces."""
    found: list[Move] = []
    if sentence.rstrip().endswith("?") or not _TRIGGER.search(sentence):
        return found
    for pattern in _PATTERNS:
        for match in pattern.finditer(sentence):
            old = _value(match.group("old"))
            new = _value(match.groupdict().get("new"))
            if old is None or (new is not None and new.lower() == old.lower()):
                continue
            values = {w.lower() for w in words(old)} | {w.lower() for w in words(new or "")}
            topic = frozenset(set(content_words(sentence)) - values - _CHANGE_WORDS)
            found.append(Move(old, new, topic))
    return found


def replaces(move: Move, note: str) -> bool:
    """Whether ``note`` states the old value of ``move`` (every word naming it, in order, whole words)
    and not already its new one."""
    lowered = note.lower()
    if move.new is not None and all(
        re.search(rf"(?<!\w){re.escape(w.lower())}(?!\w)", lowered) for w in named(move.new)
    ):
        return False
    pattern = r"\W+".join(re.escape(w.lower()) for w in named(move.old))
    return re.search(rf"(?<!\w){pattern}(?!\w)", lowered) is not None


def restates(content: str, users_values: set[str]) -> bool:
    """An assistant's cue that names a value the user's own cues name, or joins several statements
    ("billing stays on Postgres 16, I run `make test`, and changes go through …"): a restatement."""
    clauses = len(re.findall(r"[,;]\s+(?:and\s+)?|\s+and\s+", content)) + 1
    return bool(values(content) & users_values) or clauses >= 3


def moved_from(move: Move, note: str) -> bool:
    """Whether ``note`` states what ``move`` replaced, about the same thing (a shared topic word, or an
    old value named by two words or more: "Postgres 16")."""
    if not replaces(move, note):
        return False
    return bool(move.topic & set(content_words(note))) or len(named(move.old)) >= 2


_FILLER = re.compile(
    r"^(?:(?:heads[- ]up|fyi|btw|by the way|note|ok|so|also|and|just so you know)\b[,:!.]?\s*)+", re.I
)


def tidy(sentence: str) -> str:
    text = _FILLER.sub("", " ".join(sentence.split())).strip().rstrip(",;:")
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "…")) else text + "."


def prose(text: str) -> list[str]:
    """The sentences of a turn's prose: no fenced code, no activity lines, no quoted lines."""
    text = re.sub(r"```.*?(?:```|\Z)", "\n", text, flags=re.DOTALL)
    lines = [
        ln for ln in text.splitlines() if ln.strip() and not ln.lstrip().startswith(("(", ">", "$", "|"))
    ]
    return [s for ln in lines for s in sentences(ln)]
