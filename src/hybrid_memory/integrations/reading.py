"""What a transcript reader produces, and the state of one pass over a transcript's lines.

The readers of each agent's format (:mod:`~hybrid_memory.integrations.claude`,
:mod:`~hybrid_memory.integrations.codex`) share this: the messages found, the lines
skipped (counted by kind), the scaffolding that never becomes memory, and assistant
turns written a block a line joined back into one message.

Stdlib only: the Stop hook imports it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import PureWindowsPath
from typing import Any

from hybrid_memory.text import activity

_SCAFFOLD_TAGS = (
    "system-reminder",
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "command-stdout",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "user-prompt-submit-hook",
    "session-start-hook",
    "task-notification",
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
    "environment_context",
    "user_instructions",
    "skills_instructions",
    "user_shell_command",
    "INSTRUCTIONS",
    "turn_aborted",
    "hook_context",  # what Gemini CLI's hooks added to a prompt
    "private",
)
_TAGGED = re.compile(r"<(" + "|".join(_SCAFFOLD_TAGS) + r")>.*?(?:</\1>|\Z)", re.DOTALL)
"""A span and its tags; an unclosed one runs to the end of the text (a cut ``<private>`` stays private)."""
_NOTICES = (
    # Claude Code's own lines in the user's place: interrupts, empty turns, hook feedback.
    "[Request interrupted by user",
    "No response requested.",
    "Stop hook feedback:",
    "SessionStart hook additional context:",
    "UserPromptSubmit hook additional context:",
    # What the plugin's own hooks inject, should an agent echo it back as a message.
    "Long-term memory of this project (cite as [memory:",
    "Possibly relevant memory from earlier sessions (cite as [memory:",
    # Codex CLI's AGENTS.md, sent as a user message.
    "# AGENTS.md instructions for ",
    # Claude Code's answers to a slash command or a "!" command it refused, echoed as the user's turn.
    "Unknown skill: ",
    "Unknown slash command: ",
    "Unknown command: ",
    "Bash command permission check failed",
    "Error: Bash command permission check failed",
)
CONTINUATION = "This session is being continued from a previous conversation"
"""How a compaction's summary begins: scaffolding for the model, never stored."""
_WINDOWS_PATH = re.compile(r"^(?:[A-Za-z]:[\\/]|\\\\)")


@dataclass
class Message:
    """One message to remember: ``id`` is the same on every read (an entry's uuid, or derived from it)."""

    id: str
    role: str
    text: str
    created_at: str | None
    edited: list[str] = field(default_factory=list)
    """The files its tool calls edited or wrote, as the transcript names them."""
    code: dict[str, Any] | None = None
    """What capture found of its turn's edited files (:func:`hybrid_memory.codestate.snapshot`)."""
    activity: list[dict[str, str]] = field(default_factory=list)
    """Its tool uses as data (:mod:`hybrid_memory.text.activity`); its text shows each as a line."""
    at: int = 0
    """The byte offset in its transcript of the line it begins on (where a read that finds it starts)."""

    def as_argument(self) -> dict[str, Any]:
        message: dict[str, Any] = {"id": self.id, "role": self.role, "content": self.text}
        if self.created_at:
            message["created_at"] = self.created_at
        if self.code:
            message["code"] = self.code
        if self.activity:
            message["activity"] = self.activity
        message["transcript_at"] = self.at
        return message


@dataclass
class Reading:
    """What one pass over the transcript found, and where the next pass starts."""

    messages: list[Message] = field(default_factory=list)
    end: int = 0
    """Byte offset just after the last complete line read."""
    first_prompt: str | None = None
    cwd: str | None = None
    """The directory the session started in (its first entry's), not one its agent moved to later; a
    Windows one in POSIX form (``C:\\a\\b`` as ``/c/a/b``)."""
    session_id: str | None = None
    """The session the file records, as hooks name it: Claude Code's ``sessionId``, Codex's session id."""
    skipped: dict[str, int] = field(default_factory=dict)
    """Lines that gave no message, by kind (``progress``, ``summary``, ``not JSON``, ``sidechain``, …)."""
    undated: int = 0
    """Messages whose timestamp could not be read (redacted, malformed): dated by their neighbours or the
    file's time instead."""


def clean(text: str) -> str:
    """The text without scaffolding tags or private spans, whitespace trimmed; empty for a notice."""
    if "<" in text:
        text = _TAGGED.sub("", text)
    text = text.strip()
    return "" if text.startswith(_NOTICES) or text.startswith(CONTINUATION) else text


def posix_path(path: str) -> str:
    """``path`` in POSIX form: a Windows one (``C:\\Users\\ada``) as ``/c/Users/ada``."""
    if not _WINDOWS_PATH.match(path):
        return path
    pure = PureWindowsPath(path)
    drive = pure.drive.rstrip(":").lower()
    parts = [p for p in pure.parts[1:] if p not in ("\\", "/")]
    return "/" + "/".join([drive.strip("\\/").replace("\\", "/"), *parts]).strip("/")


def relative(path: str, cwd: str | None) -> str:
    """``path`` relative to ``cwd`` when inside it, both in POSIX form (Windows ones compared
    without regard to case, as Windows does)."""
    path = posix_path(path)
    if not cwd:
        return path
    base = posix_path(cwd).rstrip("/") + "/"
    folded = _WINDOWS_PATH.match(cwd) is not None
    inside = path.lower().startswith(base.lower()) if folded else path.startswith(base)
    return path[len(base) :] if inside else path


def derived_id(*parts: str) -> str:
    """A stable id in a UUID's form, for a message its transcript gives none."""
    digest = hashlib.sha256("\x1f".join(parts).encode()).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


class Pass:
    """The state of one read: the messages so far, the skipped lines, the turns still open."""

    def __init__(self, home: str | None = None) -> None:
        self.reading = Reading()
        self.home = home
        """The directory the session started in, as its lines name it: files are named relative to it."""
        self.offset = 0
        """The byte offset of the line being read."""
        self.tests: dict[str, str] = {}
        """Test commands waiting for their result, by tool call id."""
        self.commands: dict[str, str] = {}
        """Other commands waiting for their result (how they ended), by tool call id."""
        self.edits: dict[str, str] = {}
        """Edits waiting for their result (a refused or interrupted one did not happen), by tool call id."""
        self.sessions: list[str] = []
        self.edited: list[str] = []
        """Files edited since the last message added: they go to the next one."""
        self.undated: list[Message] = []
        """Messages whose timestamp was missing or unreadable, dated when the pass ends (:meth:`date`)."""
        self._turns: dict[str, Message] = {}

    def skip(self, kind: str) -> None:
        self.reading.skipped[kind] = self.reading.skipped.get(kind, 0) + 1

    def saw(self, cwd: Any = None, session: Any = None) -> None:
        # The first directory stays the session's: an agent that cd's elsewhere does not move it.
        if isinstance(cwd, str) and cwd and self.reading.cwd is None:
            self.reading.cwd = posix_path(cwd)
            self.home = self.home or cwd
        if isinstance(session, str) and session and session not in self.sessions:
            self.sessions.append(session)
            self.reading.session_id = self.reading.session_id or session

    def add(
        self,
        message_id: str,
        role: str,
        lines: list[str],
        stamp: Any,
        turn: str | None = None,
        uses: list[dict[str, str]] | None = None,
    ) -> None:
        """Remember ``lines`` and the tool ``uses`` (shown as a line each after them) as a message; a
        ``turn`` seen before in this read gets them appended."""
        uses = uses or []
        lines = [*lines, *(activity.render(use) for use in uses)]
        joined = self._turns.get(turn) if turn else None
        if joined is not None:
            joined.text = "\n".join([joined.text, *lines]) if joined.text else "\n".join(lines)
            joined.edited.extend(self.edited)
            joined.activity.extend(uses)
            self.edited = []
            return
        if not lines:
            return
        text = "\n".join(lines)
        if role == "user" and self.reading.first_prompt is None:
            self.reading.first_prompt = text
        message = Message(message_id, role, text, readable_time(stamp), self.edited, at=self.offset)
        message.activity = uses
        if message.created_at is None:
            self.undated.append(message)
        self.edited = []
        self.reading.messages.append(message)
        if turn:
            self._turns[turn] = message

    def date(self, fallback: str | None) -> None:
        """Give each undated message the time of the message before it, else the one after it, else
        ``fallback`` (the file's time); each one counted in :attr:`Reading.undated`."""
        if not self.undated:
            return
        undated = {id(m) for m in self.undated}
        messages = self.reading.messages
        after: list[str | None] = []
        known: str | None = None
        for message in reversed(messages):
            after.append(known)
            known = message.created_at or known
        after.reverse()
        before: str | None = None
        for message, later in zip(messages, after, strict=True):
            if id(message) in undated:
                message.created_at = before or later or fallback
            before = message.created_at or before
        self.reading.undated += len(self.undated)
        self.undated = []


def readable_time(stamp: Any) -> str | None:
    """``stamp`` when it is an ISO 8601 date and time ("2026-01-05T04:56:12.345Z"); None when it is
    missing or unreadable (a published transcript with its dates redacted: "[REDACTED]T04:56:12Z")."""
    if not isinstance(stamp, str) or not stamp.strip():
        return None
    try:
        datetime.fromisoformat(stamp.strip())
    except ValueError:
        return None
    return stamp.strip()
