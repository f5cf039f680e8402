"""Claude Code sessions written as scripts and played through the real hooks, as Claude Code would.

A :class:`Session` is a list of turns (the user's prompt, the assistant's reply, the tools it
used); :func:`play` writes it as Claude Code's transcript JSON Lines, line by line, and runs the
hooks a real session runs: SessionStart, then UserPromptSubmit and Stop for each turn, then
SessionEnd. Each hook is a ``hybrid-memory hook <event>`` process reading its JSON on stdin
against the data dir's host, so what a test or a benchmark sees is what a user's model sees.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.e2e.claude_code import hook_env

HOOK = Path(sys.executable).parent / "hybrid-memory"
_DAYS = itertools.count()
"""Each session written starts a day after the one before, as a story's sessions follow each other."""


def _next_day() -> datetime:
    return datetime(2026, 11, 2, 9, 0, tzinfo=UTC) + timedelta(days=next(_DAYS))


@dataclass(frozen=True)
class Tool:
    """A tool call and its result: ``Bash`` (``command``), ``Edit``/``Read`` (``file_path``), ..."""

    name: str
    arguments: dict[str, Any]
    output: str = ""
    failed: bool = False


@dataclass(frozen=True)
class Turn:
    prompt: str
    reply: str
    tools: tuple[Tool, ...] = ()


@dataclass
class Session:
    id: str
    cwd: Path
    turns: list[Turn]
    started: datetime = field(default_factory=_next_day)


@dataclass
class Played:
    """What the hooks answered in one session: SessionStart's context and each prompt's injection."""

    session_start: str
    injections: list[str]
    errors: list[str]


def hook(event: str, payload: dict[str, Any], data_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """One hook process, as Claude Code runs it."""
    return subprocess.run(
        [str(HOOK), "hook", event],
        input=json.dumps(payload),
        env=hook_env(data_dir, **env),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def context_of(done: subprocess.CompletedProcess[str]) -> str:
    """The ``additionalContext`` a hook printed; empty when it printed nothing."""
    if not done.stdout.strip():
        return ""
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


class _Writer:
    """Claude Code's transcript lines for one session, with the uuid chain and timestamps it writes."""

    def __init__(self, session: Session, path: Path) -> None:
        self.session = session
        self.path = path
        self.clock = session.started
        self.count = 0
        self.parent: str | None = None
        path.write_text("")

    def _line(self, kind: str, message: dict[str, Any], **extra: Any) -> None:
        self.count += 1
        self.clock += timedelta(seconds=20)
        uuid = f"{self.session.id}-{self.count:04d}"
        entry = {
            "parentUuid": self.parent,
            "isSidechain": False,
            "userType": "external",
            "cwd": str(self.session.cwd),
            "sessionId": self.session.id,
            "version": "2.0.31",
            "gitBranch": "main",
            "type": kind,
            "message": message,
            "uuid": uuid,
            "timestamp": self.clock.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
            **extra,
        }
        self.parent = uuid
        with self.path.open("a") as f:
            f.write(json.dumps(entry) + "\n")

    def turn(self, turn: Turn) -> None:
        self._line("user", {"role": "user", "content": turn.prompt})
        for i, tool in enumerate(turn.tools):
            tool_id = f"toolu_{self.session.id[:8]}_{self.count}_{i}"
            use = {"type": "tool_use", "id": tool_id, "name": tool.name, "input": tool.arguments}
            self._line("assistant", {"role": "assistant", "model": "claude-sonnet-4-5", "content": [use]})
            result = {"type": "tool_result", "tool_use_id": tool_id, "content": tool.output}
            if tool.failed:
                result["is_error"] = True
            self._line("user", {"role": "user", "content": [result]}, toolUseResult={"stdout": tool.output})
        reply = {"type": "text", "text": turn.reply}
        self._line("assistant", {"role": "assistant", "model": "claude-sonnet-4-5", "content": [reply]})


def play(session: Session, data_dir: Path, transcripts: Path, **env: str) -> Played:
    """Run ``session`` through every hook; capture finishes before each hook returns."""
    env = {"HYBRID_MEMORY_HOOK_DETACH": "0", **env}
    transcripts.mkdir(parents=True, exist_ok=True)
    path = transcripts / f"{session.id}.jsonl"
    writer = _Writer(session, path)
    base = {"session_id": session.id, "transcript_path": str(path), "cwd": str(session.cwd)}
    errors: list[str] = []

    def run(event: str, name: str, **extra: Any) -> str:
        done = hook(event, {**base, "hook_event_name": name, **extra}, data_dir, **env)
        if done.returncode != 0 or done.stderr:
            errors.append(f"{event}: {done.stderr.strip()}")
        return context_of(done)

    start = run("session-start", "SessionStart", source="startup")
    injections = []
    for turn in session.turns:
        injections.append(run("user-prompt-submit", "UserPromptSubmit", prompt=turn.prompt))
        writer.turn(turn)
        run("stop", "Stop", stop_hook_active=False)
    run("session-end", "SessionEnd", reason="prompt_input_exit")
    return Played(start, injections, errors)


def session_start(cwd: Path, session_id: str, data_dir: Path, **env: str) -> str:
    """The SessionStart context a new session in ``cwd`` gets."""
    payload = {
        "session_id": session_id,
        "cwd": str(cwd),
        "hook_event_name": "SessionStart",
        "source": "startup",
    }
    done = hook("session-start", payload, data_dir, **env)
    assert done.returncode == 0
    assert not done.stderr, done.stderr
    return context_of(done)


def ask(cwd: Path, session_id: str, prompt: str, data_dir: Path, **env: str) -> str:
    """The UserPromptSubmit injection ``prompt`` gets in a session in ``cwd``."""
    payload = {
        "session_id": session_id,
        "cwd": str(cwd),
        "hook_event_name": "UserPromptSubmit",
        "prompt": prompt,
    }
    done = hook("user-prompt-submit", payload, data_dir, **env)
    assert done.returncode == 0
    assert not done.stderr, done.stderr
    return context_of(done)
