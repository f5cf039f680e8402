"""Claude Code's session transcript (JSON Lines) read into the messages worth remembering.

Kept: the user's and the assistant's own words. Dropped: Claude Code's scaffolding
(system reminders, attachments, meta entries, slash-command tags, compaction summaries),
thinking, tool calls and their raw results (long, noisy, the likeliest place for a pasted
secret), and ``<private>…</private>`` spans. Of tool activity a few things become a short
line, because a later session asks about them and they cost a few tokens: which files
were edited, written or read, whether a test command passed or failed, and how any other
command that changes or checks something ended (with the error's signature when it failed).
The service reads these lines back as the session's entities (files, commands, errors).

Codex CLI's session files (``~/.codex/sessions/**/rollout-*.jsonl``), which its hooks name
as ``transcript_path`` too, are read the same way: its messages, without its developer
instructions, environment blocks, reasoning and tool calls.

Stdlib only: the Stop hook imports it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_SCAFFOLD_TAGS = (
    "system-reminder",
    "command-name",
    "command-message",
    "command-args",
    "command-contents",
    "local-command-stdout",
    "local-command-stderr",
    "local-command-caveat",
    "bash-input",
    "bash-stdout",
    "bash-stderr",
    "user-prompt-submit-hook",
    "task-notification",
    "environment_context",
    "user_instructions",
    "skills_instructions",
    "turn_aborted",
    "ide_opened_file",
    "ide_selection",
    "ide_diagnostics",
    "private",
)
_TAGGED = re.compile(r"<(" + "|".join(_SCAFFOLD_TAGS) + r")>.*?(?:</\1>|\Z)", re.DOTALL)
"""A span and its tags; an unclosed one runs to the end of the text (a cut ``<private>`` stays private)."""
_CLAUDE_NOTICES = ("[Request interrupted by user", "No response requested.")
CODEX_TEXT = ("input_text", "output_text")
_EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
_TEST_COMMAND = re.compile(
    r"\b(pytest|tox|nox|jest|vitest|mocha|go test|cargo test|npm (run )?test|make test)\b"
)
_QUIET = "ls cd cat echo pwd head tail grep rg find sed awk wc which true false sleep mkdir touch printf"
_QUIET_COMMANDS = frozenset([*_QUIET.split(), "tree", "file", "stat", "less", "diff", "sort", "env", "date"])
"""Commands that only look around: not worth a line (the files they read are not tracked either)."""
_ERROR_SIGNATURE = re.compile(
    r"^\s*((?:[\w.]+(?:Error|Exception|Failure)|error(?:\[\w+\])?|fatal|FAILED|panic)\b[:!]?.{0,100})",
    re.MULTILINE,
)
_COMMAND_CHARS = 120


@dataclass
class Message:
    """One message to remember: ``id`` is the transcript entry's uuid."""

    id: str
    role: str
    text: str
    created_at: str | None

    def as_argument(self) -> dict[str, Any]:
        message: dict[str, Any] = {"id": self.id, "role": self.role, "content": self.text}
        if self.created_at:
            message["created_at"] = self.created_at
        return message


@dataclass
class Reading:
    """What one pass over the transcript found, and where the next pass starts."""

    messages: list[Message] = field(default_factory=list)
    end: int = 0
    """Byte offset just after the last complete line read."""
    first_prompt: str | None = None
    cwd: str | None = None
    session_id: str | None = None
    """The session the file records, as hooks name it: Claude Code's ``sessionId``, Codex's session id."""


def clean(text: str) -> str:
    """The text without scaffolding tags or private spans, whitespace trimmed."""
    if "<" in text:
        text = _TAGGED.sub("", text)
    text = text.strip()
    return "" if text.startswith(_CLAUDE_NOTICES) else text


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [str(b.get("text", "")) for b in content if isinstance(b, dict) and b.get("type") == "text"]


def _relative(path: str, cwd: str | None) -> str:
    if cwd and path.startswith(cwd.rstrip("/") + "/"):
        return path[len(cwd.rstrip("/")) + 1 :]
    return path


def _program(command: str) -> str:
    """The command's program, past ``cd … &&``, ``sudo`` and variable assignments."""
    for part in re.split(r"&&|;|\|\|", command):
        words = [w for w in part.split() if "=" not in w.split("/")[0] and w != "sudo"]
        if words and words[0] != "cd":
            return words[0].rsplit("/", 1)[-1]
    return ""


def error_signature(output: str) -> str | None:
    """The last line of a failed command's output that names its error (``KeyError: 'user'``)."""
    found = _ERROR_SIGNATURE.findall(output[-20_000:])
    return " ".join(found[-1].split())[:120] if found else None


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    return "\n".join(_texts(content))


class _Pass:
    """State across the entries of one read: the commands waiting for their result."""

    def __init__(self) -> None:
        self.tests: dict[str, str] = {}
        self.commands: dict[str, str] = {}
        self.reading = Reading()

    def entry(self, entry: dict[str, Any]) -> None:
        kind = entry.get("type")
        if kind in ("response_item", "session_meta", "turn_context"):
            self._codex(entry)
            return
        if kind not in ("user", "assistant") or entry.get("isSidechain") or entry.get("isMeta"):
            return
        if entry.get("isCompactSummary") or entry.get("isVisibleInTranscriptOnly"):
            return
        message = entry.get("message")
        uuid = entry.get("uuid")
        if not isinstance(message, dict) or not isinstance(uuid, str):
            return
        cwd = entry.get("cwd") if isinstance(entry.get("cwd"), str) else None
        self.reading.cwd = cwd or self.reading.cwd
        session = entry.get("sessionId")
        if isinstance(session, str) and self.reading.session_id is None:
            self.reading.session_id = session
        content = message.get("content")
        lines = [t for t in (clean(t) for t in _texts(content)) if t]
        if kind == "assistant":
            lines.extend(self._tool_uses(content, cwd))
        else:
            lines.extend(self._tool_results(content))
        if not lines:
            return
        role = "user" if kind == "user" and not _is_tool_result(content) else "assistant"
        text = "\n".join(lines)
        if role == "user" and self.reading.first_prompt is None:
            self.reading.first_prompt = text
        stamp = entry.get("timestamp")
        self.reading.messages.append(Message(uuid, role, text, stamp if isinstance(stamp, str) else None))

    def _codex(self, entry: dict[str, Any]) -> None:
        """A line of a Codex CLI session file (``rollout-*.jsonl``): the same conversation, another shape."""
        payload = entry.get("payload")
        if not isinstance(payload, dict):
            return
        if entry["type"] != "response_item":
            cwd, session = payload.get("cwd"), payload.get("session_id") or payload.get("id")
            self.reading.cwd = cwd if isinstance(cwd, str) else self.reading.cwd
            if entry["type"] == "session_meta" and isinstance(session, str):
                self.reading.session_id = self.reading.session_id or session
            return
        role, message_id = payload.get("role"), payload.get("id")
        if (
            payload.get("type") != "message"
            or role not in ("user", "assistant")
            or not isinstance(message_id, str)
        ):
            return  # developer instructions, reasoning, tool calls and their output
        content = payload.get("content")
        blocks = content if isinstance(content, list) else []
        texts = [
            str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") in CODEX_TEXT
        ]
        text = "\n".join(t for t in (clean(t) for t in texts) if t)
        if not text:
            return
        if role == "user" and self.reading.first_prompt is None:
            self.reading.first_prompt = text
        stamp = entry.get("timestamp")
        self.reading.messages.append(
            Message(message_id, role, text, stamp if isinstance(stamp, str) else None)
        )

    def _tool_uses(self, content: Any, cwd: str | None) -> list[str]:
        lines: list[str] = []
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_use":
                continue
            given = block.get("input")
            args: dict[str, Any] = given if isinstance(given, dict) else {}
            name = block.get("name")
            path = args.get("file_path") or args.get("notebook_path")
            if name in _EDIT_TOOLS and isinstance(path, str):
                lines.append(f"(edited {_relative(path, cwd)})")
            elif name == "Read" and isinstance(path, str):
                lines.append(f"(read {_relative(path, cwd)})")
            command = args.get("command")
            if name == "Bash" and isinstance(command, str):
                flat = " ".join(command.split())[:_COMMAND_CHARS]
                if _TEST_COMMAND.search(command):
                    self.tests[str(block.get("id"))] = flat
                elif _program(command) not in _QUIET_COMMANDS:
                    self.commands[str(block.get("id"))] = flat
        return lines

    def _tool_results(self, content: Any) -> list[str]:
        lines: list[str] = []
        for block in content if isinstance(content, list) else []:
            if not isinstance(block, dict) or block.get("type") != "tool_result":
                continue
            use_id = str(block.get("tool_use_id"))
            command = self.tests.pop(use_id, None)
            if command is not None:
                outcome = "failed" if block.get("is_error") else "passed"
                lines.append(f"(tests {outcome}: {command})")
            command = self.commands.pop(use_id, None)
            if command is not None:
                signature = error_signature(_result_text(block)) if block.get("is_error") else None
                outcome = (
                    "failed" + (f": {signature}" if signature else "") if block.get("is_error") else "ok"
                )
                lines.append(f"(ran {command} → {outcome})")
        return lines


def _is_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def parse_lines(lines: Iterable[bytes]) -> Reading:
    """The messages of complete transcript lines; a line that is not a JSON object is skipped."""
    state = _Pass()
    for raw in lines:
        try:
            entry = json.loads(raw)
        except ValueError:
            continue
        if isinstance(entry, dict):
            state.entry(entry)
    return state.reading


def read_from(path: Path, offset: int) -> Reading:
    """The messages of the complete lines after byte ``offset``; a partial last line waits for the next."""
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read()
    complete = data.rfind(b"\n") + 1
    reading = parse_lines(data[:complete].splitlines())
    reading.end = offset + complete
    return reading
