"""``hybrid-memory hook <event>``: the Claude Code plugin's hooks.

Each reads Claude Code's JSON payload on stdin, does its work through the host and
prints only the JSON Claude Code expects. It always exits 0: a failure is one line on
stderr and the session goes on. Capture (Stop, PreCompact, SessionEnd) runs detached,
so the session never waits on it; a session that starts waits (briefly) for captures
still running, so it sees what the previous one said.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import time
from pathlib import Path
from typing import IO, Any

from hybrid_memory.integrations.config import CAPTURE_LOCK, HookConfig, estimate_tokens
from hybrid_memory.integrations.pending import describe as _describe

EVENTS = {
    "session-start": "SessionStart",
    "user-prompt-submit": "UserPromptSubmit",
    "stop": "Stop",
    "pre-compact": "PreCompact",
    "session-end": "SessionEnd",
}
SETTLE_S = 10.0
"""How long SessionStart waits for the previous session's capture to finish."""


class PayloadError(ValueError):
    """The hook's stdin was not the JSON object Claude Code sends."""


def _payload(stdin: IO[str]) -> dict[str, Any]:
    raw = stdin.read()
    try:
        payload = json.loads(raw)
    except ValueError:
        raise PayloadError(
            f"stdin is not JSON ({len(raw)} characters); Claude Code sends a JSON object"
        ) from None
    if not isinstance(payload, dict):
        raise PayloadError("stdin is not a JSON object; Claude Code sends one with session_id and cwd")
    if not isinstance(payload.get("session_id"), str) or not payload["session_id"]:
        raise PayloadError("the payload has no session_id; Claude Code sends one with every hook")
    return payload


def _cwd(payload: dict[str, Any]) -> Path:
    cwd = payload.get("cwd")
    return Path(cwd) if isinstance(cwd, str) and cwd else Path.cwd()


def _transcript(payload: dict[str, Any]) -> Path:
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise PayloadError("the payload has no transcript_path; Claude Code sends one with every hook")
    transcript = Path(path).expanduser()
    if not transcript.is_file():
        raise FileNotFoundError(f"the transcript {transcript} does not exist; nothing captured")
    return transcript


def _log_injection(config: HookConfig, event: str, session_id: str, text: str, ids: list[str]) -> None:
    """One line per injection, for measuring what the memory costs the model per prompt and session."""
    record = {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "event": event,
        "session_id": session_id,
        "tokens": estimate_tokens(text) if text else 0,
        "ids": ids,
    }
    config.state_dir.mkdir(parents=True, exist_ok=True)
    with (config.state_dir / "injections.jsonl").open("a") as f:
        f.write(json.dumps(record) + "\n")


def _context_output(event: str, text: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _session_start(config: HookConfig, payload: dict[str, Any]) -> dict[str, Any] | None:
    from hybrid_memory.host.client import connect
    from hybrid_memory.integrations.capture import settled
    from hybrid_memory.integrations.inject import cited, session_context

    settled(config, SETTLE_S)
    cwd = _cwd(payload)
    with connect(config.data_dir, cwd, timeout_s=config.timeout_s) as host:
        text = session_context(config, host, cwd, payload["session_id"])
    _log_injection(config, "SessionStart", payload["session_id"], text, cited(text))
    return _context_output("SessionStart", text) if text else None


def _user_prompt(config: HookConfig, payload: dict[str, Any]) -> dict[str, Any] | None:
    from hybrid_memory.host.client import connect
    from hybrid_memory.integrations.inject import prompt_context

    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise PayloadError("the UserPromptSubmit payload has no prompt")
    with connect(config.data_dir, _cwd(payload), timeout_s=config.timeout_s) as host:
        text, hits = prompt_context(config, host, prompt, payload["session_id"])
    _log_injection(config, "UserPromptSubmit", payload["session_id"], text, [h["id"] for h in hits])
    return _context_output("UserPromptSubmit", text) if text else None


def _sync_after_session(cwd: Path) -> None:
    """``hybrid-memory sync`` with HYBRID_MEMORY_SYNC_REMOTE, when set; its report goes to stderr."""
    remote = os.environ.get("HYBRID_MEMORY_SYNC_REMOTE", "").strip()
    if not remote:
        return
    import subprocess

    command = [sys.executable, "-m", "hybrid_memory", "sync", remote]
    done = subprocess.run(
        command, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True, check=False, timeout=3600
    )
    sys.stderr.write(done.stdout + done.stderr)


def _capture(config: HookConfig, payload: dict[str, Any], *, ended: bool) -> None:
    from hybrid_memory.integrations import pending

    transcript = _transcript(payload)
    session_id, cwd = payload["session_id"], _cwd(payload)
    pending.keep(config, session_id, transcript, cwd)  # before trying: a failure cannot lose it
    if not config.detach:
        pending.attempt(config, session_id, lock_timeout_s=config.timeout_s)
        if ended:
            _sync_after_session(cwd)
        return
    # Taken before the fork and inherited by the child: a session starting now waits for it.
    lock_fd = os.open(config.state_dir / CAPTURE_LOCK, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock_fd, fcntl.LOCK_SH)
    if os.fork() != 0:
        # The parent has said all it has to say (nothing): leave now, not after the
        # interpreter's teardown, so the session waits for as little as possible.
        os._exit(0)
    # The child: its own session, off Claude Code's pipes (Claude Code waits for them to close).
    os.setsid()
    pending.detach_streams(config)
    code = 0
    try:
        # A session that starts while this one waits (a command holds the store) need not wait for it.
        pending.patiently(config, session_id, waiting_starts=lambda: os.close(lock_fd))
    except Exception as exc:
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        print(
            f"{stamp} capture of session {session_id} failed: {_describe(exc)}", file=sys.stderr, flush=True
        )
        code = 1
    try:
        pending.retry(config, skip=[session_id])  # what other sessions left waiting
        if ended:
            _sync_after_session(cwd)
    finally:
        os._exit(code)


def _waiting_captures(config: HookConfig, event: str, output: dict[str, Any] | None) -> dict[str, Any] | None:
    """A starting session is told of captures that keep failing (``systemMessage``: people see it)."""
    if event != "SessionStart":
        return output
    from hybrid_memory.integrations.pending import notice

    line = notice(config.data_dir)
    return {**(output or {}), "systemMessage": line} if line else output


def run(event: str, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """Handle one hook event; always 0, with one stderr line on failure."""
    name = EVENTS.get(event)
    config: HookConfig | None = None
    output: dict[str, Any] | None = None
    try:
        if name is None:
            raise ValueError(f"unknown hook event {event!r}; use one of {', '.join(EVENTS)}")
        config = HookConfig.from_env()
        payload = _payload(stdin)
        if name == "SessionStart":
            output = _session_start(config, payload)
        elif name == "UserPromptSubmit":
            output = _user_prompt(config, payload)
        else:
            _capture(config, payload, ended=name == "SessionEnd")
    except Exception as exc:  # a hook never breaks the session
        stderr.write(f"hybrid-memory hook {event}: {_describe(exc)}\n")
    if config is None or name is None:
        return 0
    try:
        output = _waiting_captures(config, name, output)
        if output is not None:
            stdout.write(json.dumps(output) + "\n")
            stdout.flush()
        from hybrid_memory.integrations.pending import retry_detached

        retry_detached(config)  # what other sessions left waiting, in a process of its own
    except Exception as exc:
        stderr.write(f"hybrid-memory hook {event}: {_describe(exc)}\n")
    return 0


def main(argv: list[str]) -> int:
    """``hybrid-memory hook <event>`` (called by :mod:`hybrid_memory._entry` before the CLI loads)."""
    event = argv[0] if argv else ""
    return run(event, sys.stdin, sys.stdout, sys.stderr)
