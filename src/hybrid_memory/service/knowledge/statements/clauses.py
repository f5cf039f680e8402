"""The clauses of a user turn a statement could be, and what the turn before them asked.

A statement is often a clause of a casual turn ("dont use /tmp keep everything within the
claude dir"), in any language, with or without punctuation. This module cuts a turn into
such clauses and drops what is never the user's own durable word: pasted logs, tracebacks,
code and terminal output, questions, thanks and hypotheticals. It also reads the
assistant's turn before: a bare answer ("10 minutes", "go with 2") to a question or to a
list of options states what was chosen, and the option picked is named when it can be.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hybrid_memory.text.questions import asks_in_any_language

MAX_TURN_CHARS = 3_000
"""A longer user turn is a paste, unless it asks for a plan to be carried out (see PLAN)."""
MAX_PLAN_CHARS = 20_000
MAX_CLAUSE_CHARS = 300
MAX_CLAUSE_WORDS = 45

PLAN = re.compile(
    r"^\s*(?:please\s+)?(?:implement|execute|carry out|follow)\s+(?:the|this)\s+(?:following\s+)?plan\b",
    re.IGNORECASE,
)
"""A turn that hands the agent a plan to carry out: its decisions are the user's."""
SCAFFOLD = re.compile(
    r"^\s*(?:Caveat: The messages below were generated|This session is being continued from a previous"
    r"|<(?:task-notification|command-name|command-message|local-command|system-reminder|bash-)"
    r"|Unknown skill:|Base directory for this skill:)",
    re.IGNORECASE,
)
"""What the host wrote in the user's place: its notices, a compaction's summary, a skill's text."""

_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_LIST_MARK = re.compile(r"^\s*(?:[-*•·]|\d+[.)]|#+)\s+")
_ENDS = re.compile(
    r"(?<=[.!?;])\s+|(?<=[。\uff01\uff1f\uff1b])|\.{2,}\s*|[?\uff1f],\s*"
    r"|\s+(?=(?:what if|but what if|btw)\b)"
    r"|\s+(?:e|and|y|et|und)\s+(?=(?:n[ãa]o|no|dont|don't|do not|never|nunca|ne|nie|nicht)\b)",
    re.IGNORECASE,
)
_COMMAS = re.compile(
    r"\s*[,\uff0c、]\s*(?:but |and |so |then |mas |pero |mais |aber |但是|但)?|\s+-\s+|\s+—\s+"
)
LONG_CLAUSE_WORDS = 18
"""A longer sentence, or one holding a question, is read clause by clause (cut at commas)."""
_LOG_LINE = re.compile(
    r"^\s*(?:at |File \"|Traceback|\w*(?:Error|Exception|Warning)\b:?|"
    r"Consider (?:using|adding)|Did you mean|\[(?:INFO|DEBUG|WARN\w*|ERROR|TRACE|NOTE)\]|"
    r"code [A-Z_]{3,}\b|\$ |> |>>> |#!|//|/\*|"
    r"\d{4}-\d\d-\d\d[ T]\d|\[\d|\d+:\d\d|INFO\b|DEBUG\b|WARN|ERROR\b|CRITICAL\b|Setting up |Reading |"
    r"Get:\d|Hit:\d|npm (?:ERR|WARN)|[│├└┌┐┘─⎿⏺✻●▶▸✓✗✔✘]|\||\[Image #|\[Pasted text|<[a-z/!])"
)
"""Lines of terminal output, logs, tracebacks, quotes, tables, markup and pasted images."""
_ERROR_INSIDE = re.compile(r"(?:Error|Exception)\b:|\bnpm (?:ERR|WARN)")
_LETTER = re.compile(r"[^\W\d_]")
_CODE_CHARS = re.compile(r"[{}\[\]();=<>$\\^~|]")
_HYPOTHETICAL = re.compile(
    r"\b(?:i guess|i think|i suppose|not sure|probably|maybe|perhaps|might be)\b|"
    r"^(?:if|what if|suppose|imagine|maybe|perhaps|in case|unless|wondering|i wonder|"
    r"se|si|wenn|falls|ob|talvez|quizás|quizas|peut-être|vielleicht|如果|假如|要是|もし)\b"
    r"|^(?:如果|假如|要是|もし)",
    re.IGNORECASE,
)
_THANKS = re.compile(
    r"^(?:thanks|thank you|thx|ty|great|perfect|awesome|nice|cool|sweet|ok|okay|k|yes|yep|yeah|no|nope|"
    r"good|lgtm|done|continue|go on|go ahead|proceed|sounds good|got it|works|worked|"
    r"obrigad[oa]|valeu|gracias|merci|danke|super|genial|parfait|perfecto|perfeito|"
    r"谢谢|謝謝|好的|好|可以|继续|繼續|ありがとう|はい|了解)\b[\s!.。\uff01,]*$"
    r"|^(?:谢谢|謝謝|好的|继续|繼續|ありがとう|了解)",
    re.IGNORECASE,
)
_NUMBERED_OPTION = re.compile(
    r"^\s*(?:\*\*)?(?:option\s+)?(?P<n>\d+|[A-C])(?:[.):]|\*\*)\s*(?:\*\*)?(?P<text>.+)$", re.IGNORECASE
)
_PICK = re.compile(
    r"^(?:(?:let'?s |i'?ll |we'?ll )?(?:go with|use|pick|take|choose|do)\s+)?(?:option\s+|number\s+|#)?"
    r"(?P<n>\d|[A-C]|one|two|three|first|second|third|last)\b(?:\s+(?:please|then|it is|is fine))?[.!]?$",
    re.IGNORECASE,
)
_INLINE_OPTION = re.compile(r"(?:^|\s)(?P<n>[1-9])[.)]\s+(?P<text>.+?)(?=\s+[1-9][.)]\s|[.?!]\s|[.?!]?$)")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")
_ORDINALS = {"one": 1, "first": 1, "two": 2, "second": 2, "three": 3, "third": 3, "a": 1, "b": 2, "c": 3}


@dataclass(frozen=True)
class Clause:
    """One candidate clause of a user turn, with what made it a candidate."""

    text: str
    turn_text: str
    prev_assistant: str
    answer_to: str = ""
    """The assistant's question or the option this bare reply answers ("" when it answers none)."""
    in_plan: bool = False


def prose(line: str) -> bool:
    """Whether ``line`` reads as someone's words: not a log, traceback, table, markup or code line."""
    stripped = line.strip()
    if not stripped or _LOG_LINE.match(stripped) or _ERROR_INSIDE.search(stripped):
        return False
    if len(_CODE_CHARS.findall(stripped)) > max(3, len(stripped) // 12):
        return False
    letters = len(_LETTER.findall(stripped))
    return letters >= max(2, len(stripped) // 2)


def pieces(text: str) -> list[str]:
    """The prose clauses of ``text``: code blocks and non-prose lines dropped, cut at sentence ends."""
    found: list[str] = []
    for line in _FENCE.sub("\n", text).splitlines():
        if not prose(line):
            continue
        for raw in _ENDS.split(_LIST_MARK.sub("", line).strip()):
            piece = raw.strip().strip("*_`\"'“”«»").strip()
            if piece:
                found.append(piece)
    return found


def stated(piece: str) -> bool:
    """Whether ``piece`` could be a statement: not a question, a hypothetical, thanks; not too long."""
    if len(piece) > MAX_CLAUSE_CHARS or len(piece.split()) > MAX_CLAUSE_WORDS:
        return False
    return not (asks_in_any_language(piece) or _HYPOTHETICAL.search(piece) or _THANKS.match(piece))


def _last_question(assistant: str) -> str:
    """The assistant's last question before the user's turn ("" when it asked none)."""
    sentences = [s.strip() for s in re.split(r"(?<=[.!?。\uff1f\uff01])\s+|\n+", assistant) if s.strip()]
    asked = [s for s in sentences[-4:] if s.endswith(("?", "\uff1f"))]
    return asked[-1].lstrip("*# ") if asked else ""


def _options(assistant: str) -> dict[int, str]:
    options: dict[int, str] = {}
    for line in assistant.splitlines():
        found = _NUMBERED_OPTION.match(line)
        if found:
            n = found.group("n")
            number = int(n) if n.isdigit() else _ORDINALS[n.lower()]
            options.setdefault(number, found.group("text").strip(" *:—-")[:120])
    if not options:  # "Three options: 1. Keep REST 2. Move to tRPC 3. Add GraphQL. Which one?"
        for found in _INLINE_OPTION.finditer(assistant):
            options.setdefault(int(found.group("n")), found.group("text").strip(" *:—-.")[:120])
    return options


def _named(reply: str, assistant: str) -> str:
    """The option a reply names, among the terms the assistant set in bold ("" when it names none)."""
    lowered = f" {reply.lower()} "
    named = [t.strip() for t in _BOLD.findall(assistant) if 2 <= len(t.strip()) <= 40]
    return next((t for t in named if f" {t.lower()} " in lowered), "")


def answered(reply: str, assistant: str) -> str:
    """What a bare reply answers: the option it picks ("option 2: Redis"), else the question asked."""
    named = _named(reply, assistant) if _last_question(assistant) else ""
    if named:
        return "one of the options offered"
    picked = _PICK.match(reply.strip())
    options = _options(assistant) if picked else {}
    if picked and options:
        n = picked.group("n").lower()
        number = int(n) if n.isdigit() else (max(options) if n == "last" else _ORDINALS.get(n, 0))
        if number in options:
            return f"option {number}: {options[number]}"
    asked = _last_question(assistant)
    return f"asked: {asked}" if asked else ""


def _split(piece: str) -> list[str]:
    """``piece`` whole when it reads as one statement, else its comma clauses that do."""
    if stated(piece) and len(piece.split()) <= LONG_CLAUSE_WORDS:
        return [piece]
    parts = [p.strip() for p in _COMMAS.split(piece) if p and p.strip()]
    if len(parts) == 1:
        return [piece] if stated(piece) else []
    return [p for p in parts if stated(p)]


def clauses(text: str, prev_assistant: str = "") -> list[Clause]:
    """The candidate clauses of one user turn (``prev_assistant``: the assistant's turn before it)."""
    if SCAFFOLD.match(text):
        return []
    in_plan = bool(PLAN.match(text))
    if len(text) > (MAX_PLAN_CHARS if in_plan else MAX_TURN_CHARS):
        return []
    if in_plan:
        text = PLAN.sub("", text, count=1).lstrip(" :\n")
    found = [c for p in pieces(text) for c in _split(p)]
    short = len(found) == 1 and len(found[0].split()) <= 6 and len(text) < 80
    answer_to = answered(found[0], prev_assistant) if short and prev_assistant else ""
    return [Clause(p, text, prev_assistant, answer_to=answer_to, in_plan=in_plan) for p in found]
