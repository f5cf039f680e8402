"""A session's digest, written when it ends (and kept current while it runs): four fixed lines.

```
Goal: <the user's first real request, whole>
Changed: edited <files>; ran <command> (passed|failed|ok), …
Decided: <the decisions and rules stated in it>
Open: <failing tests, what was left for later, a last request with no answer>
```

A line with nothing to say is left out. Deterministic: the turns' prose (pasted output, logs,
tracebacks, tables, notifications and code left out: :mod:`hybrid_memory.text.junk`), their
activity lines (see :mod:`~hybrid_memory.service.knowledge.capture.entities`) and the session's cues.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hybrid_memory.service.knowledge._text import content_words
from hybrid_memory.service.knowledge.capture.entities import command_name
from hybrid_memory.service.knowledge.statements.cues import Cue, Said
from hybrid_memory.text.junk import junk, prose
from hybrid_memory.text.questions import asks
from hybrid_memory.text.words import cut, sentences

MAX_LINE_CHARS = 300
LABELS = ("Goal:", "Asked:", "Changed:", "Decided:", "Open:")
MODEL_SYSTEM = """\
You write the digest of a coding session for the assistant's next session. Answer with at most \
four lines, each starting with its label, leaving out a line with nothing to say:
Goal: what the user set out to do, in one line
Changed: files edited, commands run and how they ended, tests passed or failed
Decided: decisions made and rules the user set
Open: what was left unfinished or unanswered
Use only what the session says; no preamble."""
_OPEN = re.compile(
    r"\b(?:TODO|FIXME)\b|(?i:\b(?:"
    r"left (?:for|to) (?:later|do)|next steps?(?::| is| are)|"
    r"still (?:need|needs|to do|failing|fails|broken|open|missing|pending)|"
    r"not (?:done|finished|implemented|fixed|working) yet|"
    r"not yet (?:done|finished|implemented|fixed|working|tested|wired|merged|deployed|handled)|"
    r"(?:needs? a|as a) follow-?up|follow-?ups?:|"
    r"remaining (?:work|items?|tasks?|issues?|failures?|steps?|todos?)|(?:items?|tasks?|work) remaining|"
    r"(?:is|are|remains?|left) pending|pending:|"
    r"(?:for|until) later|(?:do|fix|handle|revisit|address|finish|deal with|come back to|look at)"
    r"(?: (?:it|this|that|them|those|the rest))? later|"
    r"(?:am|are|is|'m|'re|'s|still) blocked (?:on|by|until)"
    r")(?!\w))"
)
"""What a session left open, as its own words say it: precise phrases, not every "later" or "pending"
of ordinary prose ("the export finishes later now", "it applies the pending migrations")."""
_LAST_TURNS = 12


_COMMAND = re.compile(r"^[\w.@+-][\w./:@+=-]*(?: [\w./:@+=-]+){0,2}$")
"""A command's name as a digest lists it ("git push", "uv run pytest"); not a pattern or a fragment."""


_SET_UP = re.compile(
    r"^(?:please\s+)?(?:load|read|open|check|follow|reload|re-?read)\s+(?:the\s+|my\s+|your\s+)?"
    r"(?:claude|agents|gemini|readme|instructions?|memory|context)(?:\.md)?\W*$",
    re.IGNORECASE,
)
"""A first prompt that only sets the session up ("load claude.md"): not what the session was for."""
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _says_something(text: str) -> bool:
    """At least three words that carry meaning (four characters, in a language written without spaces)."""
    return len(content_words(text)) >= 3 or len(_CJK.findall(text)) >= 4


def goal(prompts: Sequence[str]) -> str | None:
    """The user's first real request, whole, on one line: its prose (a pasted log, code, a table or an
    image tag left out), the first prompt that says something and does more than set the session up."""
    for prompt in prompts:
        if prompt.lstrip().startswith("/"):
            continue
        kept = prose(prompt)
        pasted = sum(1 for line in prompt.splitlines() if junk(line))
        if pasted >= 3 and pasted > 2 * len(kept.splitlines()):
            continue  # a paste with a title or two: its few lines of prose are the paste's, not a request
        text = " ".join(kept.split())
        if _says_something(text) and not _SET_UP.match(text):
            return cut(text, MAX_LINE_CHARS)
    return None


def _changed(said: Sequence[Said]) -> tuple[list[str], list[str], str | None]:
    """Files edited, commands with their last outcome, and a test command still failing at the end."""
    edited: dict[str, int] = {}
    ran: dict[str, str] = {}
    failing: str | None = None
    for turn in said:
        for use in turn.uses:
            verb = use["verb"]
            if verb in ("edited", "not edited"):
                # An edit refused or interrupted ("not edited") takes back the one its call announced.
                path = use["path"]
                edited[path] = edited.get(path, 0) + (1 if verb == "edited" else -1)
            elif verb == "tests":
                name = command_name(use["command"]) or use["command"]
                ran[name] = use["outcome"]
                failing = use["command"] if use["outcome"] == "failed" else None
            elif verb == "ran":
                ran[command_name(use["command"])] = "failed" if use["outcome"] == "failed" else "ok"
    commands = [f"{c} ({o})" for c, o in ran.items() if _COMMAND.match(c) and junk(c) is None]
    return [p for p, n in edited.items() if n > 0], commands, failing


def _open(said: Sequence[Said], failing: str | None) -> list[str]:
    items = [f"tests failing: {failing}"] if failing else []
    for turn in said[-_LAST_TURNS:]:
        for sentence in sentences(
            " ".join(ln for ln in prose(turn.text).splitlines() if not ln.startswith("("))
        ):
            if _OPEN.search(sentence) and len(items) < 3 and junk(sentence) is None:
                items.append(cut(sentence, 140))
    last = said[-1] if said else None
    # A last message with no reply after it is open only when it asks: a statement or an
    # instruction the assistant acknowledged ("Noted.", "Done." are not stored) is not.
    question = " ".join(prose(last.text).split()) if last is not None and last.role == "user" else ""
    if question and not question.startswith("(") and asks(question):
        items.append(f"unanswered: {cut(question, 120)}")
    return list(dict.fromkeys(items))


def model_answer(answer: str | None) -> str | None:
    """The digest lines of a model's answer; None when it holds none (the deterministic digest is kept)."""
    lines = [ln.strip() for ln in (answer or "").splitlines() if ln.strip().startswith(LABELS)]
    return "\n".join(cut(ln, MAX_LINE_CHARS + 10) for ln in lines[:4]) or None


def _line(label: str, items: Sequence[str], sep: str = "; ") -> str | None:
    return f"{label}: {cut(sep.join(items), MAX_LINE_CHARS)}" if items else None


def digest(said: Sequence[Said], decided: Sequence[Cue]) -> str:
    """The digest of a session's turns (in order) and the cues stated in it; '' for an empty session."""
    prompts = [t.text for t in said if t.role == "user" and not t.text.startswith("(")]
    edited, ran, failing = _changed(said)
    changed = (
        [f"edited {', '.join(edited[:8])}" + (f" (+{len(edited) - 8} more)" if len(edited) > 8 else "")]
        if edited
        else []
    )
    if ran:
        changed.append("ran " + ", ".join(ran[:8]))
    wanted = goal(prompts)
    lines = [
        f"Goal: {wanted}" if wanted else None,
        _line("Changed", changed),
        _line(
            "Decided",
            [c.content for c in decided if c.kind in ("decision", "rule") and junk(c.content) is None],
        ),
        _line("Open", _open(said, failing)),
    ]
    return "\n".join(line for line in lines if line)
