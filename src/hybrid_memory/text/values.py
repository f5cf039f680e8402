"""Two statements alike but for a value: which value changed ("15 minutes" to "30 minutes").

A note stated again with another number, version, name, switch (on/off) or with a negation
added or dropped is an update of the older note, never a duplicate of it. The statements are
compared word by word: every difference must be such a value, and the words they share must
say what the value is of (at least three words that carry meaning). Anything else (another
subject, another verb, a sentence reworded) is not a change of value.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

_FUNCTION_WORDS = frozenset(
    """
    a an the and or but of to in on at by for from with as is are was were be been it its this that these
    those there here we you i he she they them our your my his her their me us so if then than too very
    all any some each every into over after before when while which who what where how why will would
    can could should shall may might must do does did has have had just also only now
    """.split()  # noqa: SIM905 - a word list reads best as text
)
"""Words that say what kind of sentence it is, not what it is about."""
_TOKEN = re.compile(r"`[^`]+`|[^\W_](?:[\w.+/:@#-]*[^\W_%]|%)?|%")
_SWITCHES = frozenset(
    """
    on off enabled disabled enable disable true false yes no allowed forbidden allow forbid
    required optional mandatory public private visible hidden sync async strict lax
    """.split()  # noqa: SIM905 - a word list reads best as text
)
_NEGATIONS = frozenset(
    """
    not never no don't dont doesn't doesnt isn't isnt aren't arent won't wont can't cant cannot
    shouldn't shouldnt mustn't mustnt didn't didnt longer nicht kein keine nie não nunca jamais pas
    """.split()  # noqa: SIM905 - a word list reads best as text
)
_POLARITY = frozenset(("always", "do", "does", "must", "should", "sempre", "siempre", "immer", "toujours"))
"""Words that, traded for a negation ("always" for "never"), turn a statement round."""
_UNITS = frozenset(
    """
    ms millisecond milliseconds s sec secs second seconds min mins minute minutes h hr hrs hour hours
    day days week weeks month months year years kb mb gb tb kib mib gib tib b byte bytes px em rem
    percent % x times req requests rps qps users items rows cores threads workers replicas
    """.split()  # noqa: SIM905 - a word list reads best as text
)
_LINKING = frozenset(("the", "a", "an", "to", "at", "of", "v", "version"))
"""Words that may travel with a value in a difference ("to 30", "v17") without being one."""
MIN_SHARED_WORDS = 3
MAX_CHANGED_SHARE = 0.4
"""At most this share of the longer statement's words may differ."""


@dataclass(frozen=True)
class Change:
    """What changed between two statements alike but for a value."""

    was: str
    """The old value in the old statement's words ("15 minutes", "Postgres 16"), or the old statement
    itself when the change is a negation."""
    now: str


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text)


def _is_value(token: str, first: bool) -> bool:
    lowered = token.lower()
    if token.startswith("`") or any(ch.isdigit() for ch in token) or lowered in _SWITCHES:
        return True
    if any(ch in token for ch in "./_@#:") and len(token) > 2:
        return True  # a file, a package, a module, a host
    named = token[:1].isupper() or any(ch.isupper() for ch in token[1:])
    return named and (not first or lowered not in _FUNCTION_WORDS)


def _side_is_value(tokens: list[str], start: int) -> bool:
    """Whether a difference's tokens on one side are values (with their units and linking words)."""
    values = [t for i, t in enumerate(tokens) if _is_value(t, start + i == 0)]
    rest = [t for t in tokens if not _is_value(t, False) and t.lower() not in (_UNITS | _LINKING)]
    return bool(values) and not rest and len(values) <= 4


def _with_unit(tokens: list[str], start: int, end: int) -> str:
    """The words ``tokens[start:end]``, with the unit that follows a number ("15" and "minutes") and
    the name a version number belongs to ("Postgres" and "16")."""
    number = any(c.isdigit() for c in tokens[end - 1])
    if number and end < len(tokens) and tokens[end].lower() in _UNITS:
        end += 1
    if number and end - start == 1 and start > 0 and _is_value(tokens[start - 1], start == 1):
        start -= 1
    return " ".join(tokens[start:end]).strip("`")


def change(old: str, new: str) -> Change | None:
    """How ``new`` changes a value of ``old``; None when they differ otherwise (or not at all)."""
    a, b = _tokens(old), _tokens(new)
    lowered_a, lowered_b = [t.lower() for t in a], [t.lower() for t in b]
    matcher = difflib.SequenceMatcher(a=lowered_a, b=lowered_b, autojunk=False)
    shared = [
        t
        for tag, i1, i2, _, _ in matcher.get_opcodes()
        if tag == "equal"
        for t in lowered_a[i1:i2]
        if t not in _FUNCTION_WORDS and len(t) > 1 and t not in _NEGATIONS
    ]
    differing = [op for op in matcher.get_opcodes() if op[0] != "equal"]
    if not differing or len(shared) < MIN_SHARED_WORDS:
        return None
    changed = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in differing)
    if changed > MAX_CHANGED_SHARE * max(len(a), len(b)):
        return None
    was: list[str] = []
    now: list[str] = []
    negated = False
    for tag, i1, i2, j1, j2 in differing:
        old_side, new_side = lowered_a[i1:i2], lowered_b[j1:j2]
        both = old_side + new_side
        if any(t in _NEGATIONS for t in both) and all(t in _NEGATIONS or t in _POLARITY for t in both):
            negated = True
            continue
        if tag != "replace" or not (_side_is_value(a[i1:i2], i1) and _side_is_value(b[j1:j2], j1)):
            return None
        if i1 == 0 and len(differing) > 1:
            return None  # another subject and something else besides: two statements, not one changed
        was.append(_with_unit(a, i1, i2))
        now.append(_with_unit(b, j1, j2))
    if negated and not was:
        return Change(was=" ".join(old.split()), now=" ".join(new.split()))
    return Change(was=", ".join(was), now=", ".join(now)) if was else None
