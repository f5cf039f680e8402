"""Who a query asks about, and which turns state something rather than only ask.

Two facts about any conversation, read from the words alone:

- A question in the first person ("which food allergy does my sibling have?", "how many
  times did I go to the gym?") asks for what the *user* said: a user's own statement is the
  evidence, and an assistant's reply that repeats its words ("Noted: I will only suggest
  restaurants that handle nut allergies.") is not. A question about the assistant's words
  ("what did you recommend?") asks for the assistant's turns. A question in neither person
  ("when did Caroline go to the support group?", "which database did we choose?") prefers
  no speaker.
- A question that names one of the people a conversation's turns are written by ("what did
  Caroline research?", where turns read "Caroline: ..." and "Melanie: ...") asks for what that
  person said: another speaker's reply that repeats the words ("That charity race sounds great,
  Mel!") is not the evidence.
- A turn that only asks ("What's your favourite book?") states nothing, so the reply after it
  may take its place; a turn that says something and then asks ("I moved to Lisbon last
  week. Any tips for finding a dentist?") is itself the evidence, and keeps it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache

from hybrid_memory.models import Memory, MemoryKind
from hybrid_memory.service.recall import ranking

USER, ASSISTANT = "user", "assistant"

# Requests to the assistant ("can you remind me", "do you remember") address it without
# asking about anything it said.
_REQUEST = re.compile(
    r"\b(?:can|could|would|will|do)\s+you\s+(?:please\s+)?"
    r"(?:remind|remember|recall|tell|help|give|list|check|find|suggest|recommend|say|know)\b",
    re.IGNORECASE,
)
# The asker points at what the assistant said earlier: "you recommended", "our previous chat".
_ITS_WORDS = re.compile(
    r"\byou\s+(?:\w+\s+)?(?:sa(?:y|id)|t(?:ell|old)|g(?:ive|ave)|(?:mention|recommend|suggest|provide|list|share|explain)(?:ed)?)\b"
    r"|\b(?:our|the)\s+(?:previous|last|earlier|past)\s+(?:conversation|chat|discussion|session)s?\b"
    r"|\bwe\s+(?:talked|discussed|chatted|spoke)\b",
    re.IGNORECASE,
)
_SECOND = re.compile(r"\b(?:you|your|yours|yourself)\b", re.IGNORECASE)
# "I" only as a capital: a lone lower-case "i" is more often a list item or a typo.
_I = re.compile(r"\bI(?:'m|'ve|'d|'ll)?\b")
_ME = re.compile(r"\b(?:me|my|mine|myself)\b", re.IGNORECASE)


def asks_about(query: str) -> str | None:
    """The speaker whose statements ``query`` asks for: ``"user"``, ``"assistant"`` or None (either)."""
    rest = _REQUEST.sub(" ", query)
    if _ITS_WORDS.search(rest):
        return ASSISTANT
    second = _SECOND.search(rest) is not None
    first = _I.search(rest) is not None or _ME.search(rest) is not None
    if second and not first:
        return ASSISTANT
    if first and not second:
        return USER
    return None


TEXTS_KEPT = 4096
"""Texts whose facts (the author a turn names, whether it asks) are kept: the rules read them on
every recall, and an agent's recalls keep meeting the same turns."""

# A transcript's turn written "Name: text" (a chat log, a meeting transcript, an import).
_AUTHOR = re.compile(r"([A-Z][\w'.-]{0,39}): \S")


@lru_cache(maxsize=TEXTS_KEPT)
def author(text: str) -> str | None:
    """The name a turn written ``"Name: text"`` starts with, else None."""
    found = _AUTHOR.match(text)
    return found.group(1) if found else None


def named_author(query: str, authors: Iterable[str | None]) -> str | None:
    """The one author among ``authors`` that ``query`` names (a whole word, as written), else None.

    Only among two authors or more: a store whose turns all start "Note: ..." names no speaker.
    """
    distinct = {a for a in authors if a}
    if len(distinct) < 2:
        return None
    named = [a for a in distinct if re.search(rf"\b{re.escape(a)}\b", query)]
    return named[0] if len(named) == 1 else None


def prefer_author(
    fused: Sequence[ranking.Fused], author_of: Mapping[str, str | None], name: str, factor: float
) -> list[ranking.Fused]:
    """Turns another named author wrote keep ``factor`` x their relevance; everything else stays."""
    return prefer(
        fused, {i: "other" if a not in (None, name) else None for i, a in author_of.items()}, "", factor
    )


def prefer(
    fused: Sequence[ranking.Fused], role_of: Mapping[str, str | None], speaker: str, factor: float
) -> list[ranking.Fused]:
    """Turns of the other speaker keep ``factor`` x their relevance; everything else stays."""
    other = {USER: ASSISTANT, ASSISTANT: USER}.get(speaker, "other")
    out = [
        ranking.Fused(f.id, factor * f.relevance, f.ranks, f.scores) if role_of.get(f.id) == other else f
        for f in fused
    ]
    return ranking.in_order(out, {i for i, role in role_of.items() if role == other})


def replies_to(memories: Mapping[str, Memory], speaker: str) -> dict[str, str]:
    """Each candidate turn of ``speaker`` -> the other speaker's candidate turn that replies to it.

    The reply's message is found through its chunks' chain (``prev_id``) as far as its chunks are
    loaded; a reply whose first chunk is not among the candidates is left out.
    """
    out: dict[str, str] = {}
    for reply_id, reply in memories.items():
        if reply.kind is not MemoryKind.MESSAGE or reply.role in (None, speaker):
            continue
        current: Memory | None = reply
        while current is not None and current.chunk_index > 0:
            current = memories.get(current.prev_id or "")
        said = memories.get(current.prev_id or "") if current is not None else None
        if said is not None and said.role == speaker and said.kind is MemoryKind.MESSAGE:
            out.setdefault(said.id, reply_id)
    return out
