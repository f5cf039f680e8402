"""Labelled sessions: what people said and which of it a later session should know.

One JSON object a line: ``session``, ``project``, ``turns`` (each ``text`` and
``prev_assistant``, the assistant's text just before it) and ``statements`` (each a verbatim
sentence or clause of a user turn, with ``kind``, ``confidence`` high or low and, in another
language, an English ``gloss``). The statement classifier is trained on such sessions (the
ones shipped in ``data/``) and the extraction bench measures on them.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from hybrid_memory.service.knowledge.statements.cues import Said

DATA_DIR = Path(__file__).resolve().parent / "data"
SHIPPED = DATA_DIR / "statements.jsonl"
"""The labelled sessions shipped with the package (the classifier's own training data)."""

_TOKEN = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]|[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Statement:
    text: str
    kind: str
    confidence: str


@dataclass(frozen=True)
class Turn:
    text: str
    prev_assistant: str


@dataclass
class Session:
    session: str
    project: str
    turns: list[Turn] = field(default_factory=list)
    statements: list[Statement] = field(default_factory=list)


def load(path: Path) -> list[Session]:
    """The labelled sessions of a JSONL file."""
    sessions: list[Session] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        raw = json.loads(line)
        sessions.append(
            Session(
                session=raw["session"],
                project=raw["project"],
                turns=[Turn(t["text"], t.get("prev_assistant", "")) for t in raw["turns"]],
                statements=[
                    Statement(s["text"], s["kind"], s.get("confidence", "high")) for s in raw["statements"]
                ],
            )
        )
    return sessions


def tokens(text: str) -> list[str]:
    """Lower-cased words, each Chinese or Japanese character one token."""
    return [t.lower() for t in _TOKEN.findall(text)]


def matches(found: str, statement: str) -> bool:
    """Whether a clause or note ``found`` says ``statement``: most of its words, and not lost in more.

    A clause of a longer statement says it too when nearly all its words are the statement's.
    """
    said, wanted = tokens(found), tokens(statement)
    if not said or not wanted:
        return False
    pool = list(said)
    shared = 0
    for token in wanted:
        if token in pool:
            pool.remove(token)
            shared += 1
    part = len(said) >= 4 and shared / len(said) >= 0.9
    return part or (shared / len(wanted) >= 0.6 and shared / len(said) >= 0.3)


def said(session: Session) -> list[Said]:
    """The session's turns as captured: each user turn after the assistant turn before it."""
    turns: list[Said] = []
    for n, turn in enumerate(session.turns):
        if turn.prev_assistant:
            turns.append(Said(f"{session.session}:{n}:a", "assistant", turn.prev_assistant))
        turns.append(Said(f"{session.session}:{n}", "user", turn.text))
    return turns


def stated(session: Session, text: str) -> list[Statement]:
    """The labelled statements of ``session`` that ``text`` says."""
    return [s for s in session.statements if matches(text, s.text)]
