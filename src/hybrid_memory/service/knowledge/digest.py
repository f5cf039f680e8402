"""A session's digest, written when it ends (and kept current while it runs): four fixed lines.

```
Asked: <the first request> | <the weightiest later ones>
Changed: edited <files>; ran <command> (passed|failed|ok), …
Decided: <the decisions and rules stated in it>
Open: <failing tests, what was left for later, a last request with no answer>
```

A line with nothing to say is left out. Deterministic: the turns' text and activity lines
(see :mod:`~hybrid_memory.service.knowledge.entities`) and the session's cues.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from hybrid_memory.service.knowledge._text import content_words
from hybrid_memory.service.knowledge.cues import Cue, Said, key
from hybrid_memory.service.knowledge.entities import command_name
from hybrid_memory.text.questions import asks
from hybrid_memory.text.words import cut, sentences

MAX_LINE_CHARS = 300
LABELS = ("Asked:", "Changed:", "Decided:", "Open:")
MODEL_SYSTEM = """\
You write the digest of a coding session for the assistant's next session. Answer with at most \
four lines, each starting with its label, leaving out a line with nothing to say:
Asked: what the user asked for
Changed: files edited, commands run and how they ended, tests passed or failed
Decided: decisions made and rules the user set
Open: what was left unfinished or unanswered
Use only what the session says; no preamble."""
ASKED = 3
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


_FENCED = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
"""A pasted log or code block: the request around it is what was asked."""


def _asked(prompts: Sequence[str]) -> list[str]:
    prompts = [" ".join(_FENCED.sub(" […] ", p).split()) for p in prompts]
    weighty = [p for p in prompts if len(content_words(p)) >= 3]
    if not weighty:
        return []
    first, rest = weighty[0], weighty[1:]
    chosen = sorted(sorted(rest, key=lambda p: -len(content_words(p)))[: ASKED - 1], key=rest.index)
    seen: set[str] = set()
    asked: list[str] = []
    for prompt in [first, *chosen]:
        if key(prompt) not in seen:
            seen.add(key(prompt))
            asked.append(cut(prompt, 120))
    return asked


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
    return [p for p, n in edited.items() if n > 0], [f"{c} ({o})" for c, o in ran.items() if c], failing


def _open(said: Sequence[Said], failing: str | None) -> list[str]:
    items = [f"tests failing: {failing}"] if failing else []
    for turn in said[-_LAST_TURNS:]:
        for sentence in sentences(" ".join(ln for ln in turn.text.splitlines() if not ln.startswith("("))):
            if _OPEN.search(sentence) and len(items) < 3:
                items.append(cut(sentence, 140))
    last = said[-1] if said else None
    # A last message with no reply after it is open only when it asks: a statement or an
    # instruction the assistant acknowledged ("Noted.", "Done." are not stored) is not.
    if last is not None and last.role == "user" and not last.text.startswith("(") and asks(last.text):
        items.append(f"unanswered: {cut(last.text, 120)}")
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
    lines = [
        _line("Asked", _asked(prompts), " | "),
        _line("Changed", changed),
        _line("Decided", [c.content for c in decided if c.kind in ("decision", "rule")]),
        _line("Open", _open(said, failing)),
    ]
    return "\n".join(line for line in lines if line)
