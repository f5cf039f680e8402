"""``hybrid-memory hook <event>``: the Claude Code plugin's hooks.

Each reads Claude Code's JSON payload on stdin, sends one request to the host and
prints only the JSON Claude Code expects. It always exits 0: a failure is one line on
stderr and the session goes on. Capture (Stop, PreCompact, SessionEnd) keeps the capture
waiting on disk (:mod:`~hybrid_memory.integrations.pending`), then runs detached,
so the session never waits on it; a session that starts waits (briefly) for captures
still running, so it sees what the previous one said.
"""

from __future__ import annotations

import os
import sys
import time

from hybrid_memory.host import jsonc
from hybrid_memory.integrations.config import CAPTURE_LOCK, HookConfig
from hybrid_memory.integrations.pending import describe as _describe

TYPE_CHECKING = False
if TYPE_CHECKING:  # ``typing`` and ``pathlib`` are among the slowest of a prompt hook's imports
    from typing import IO, Any

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
        payload = jsonc.loads(raw)
    except ValueError:
        raise PayloadError(
            f"stdin is not JSON ({len(raw)} characters); Claude Code sends a JSON object"
        ) from None
    if not isinstance(payload, dict):
        raise PayloadError("stdin is not a JSON object; Claude Code sends one with session_id and cwd")
    if not isinstance(payload.get("session_id"), str) or not payload["session_id"]:
        raise PayloadError("the payload has no session_id; Claude Code sends one with every hook")
    return payload


def _cwd(payload: dict[str, Any]) -> str:
    cwd = payload.get("cwd")
    return cwd if isinstance(cwd, str) and cwd else os.getcwd()


def _transcript(payload: dict[str, Any]) -> str:
    path = payload.get("transcript_path")
    if not isinstance(path, str) or not path:
        raise PayloadError("the payload has no transcript_path; Claude Code sends one with every hook")
    transcript = os.path.expanduser(path)
    if not os.path.isfile(transcript):
        raise FileNotFoundError(f"the transcript {transcript} does not exist; nothing captured")
    return transcript


def _log_injection(config: HookConfig, event: str, session_id: str, answer: dict[str, Any]) -> None:
    """One line per injection, for measuring what the memory costs the model per prompt and session."""
    record = {
        "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "event": event,
        "session_id": session_id,
        "tokens": int(answer.get("tokens") or 0),
        "ids": list(answer.get("ids") or []),
    }
    os.makedirs(config.state_dir, exist_ok=True)
    with open(os.path.join(config.state_dir, "injections.jsonl"), "a") as f:
        f.write(jsonc.dumps(record) + "\n")


def _inject(
    config: HookConfig, payload: dict[str, Any], event: str, prompt: str | None
) -> dict[str, Any] | None:
    """One request to the host, which builds the text; the hook prints it (nothing when it is empty)."""
    from hybrid_memory.host import wire
    from hybrid_memory.host.client import ask

    limits = {
        "context_tokens": config.context_tokens,
        "prompt_tokens": config.prompt_tokens,
        "min_match": config.min_match,
        "min_note_match": config.min_note_match,
    }
    params = {
        "session_id": payload["session_id"],
        "cwd": _cwd(payload),
        "prompt": prompt,
        "limits": limits,
    }
    kind = wire.SESSION_START if event == "SessionStart" else wire.PROMPT
    answer = ask(config.data_dir, wire.inject_request(kind, params), timeout_s=config.timeout_s)
    _log_injection(config, event, payload["session_id"], answer)
    text = answer.get("text")
    if not isinstance(text, str) or not text:
        return None
    return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}


def _session_start(config: HookConfig, payload: dict[str, Any]) -> dict[str, Any] | None:
    from hybrid_memory.integrations.pending import settled

    settled(config, SETTLE_S)
    return _inject(config, payload, "SessionStart", None)


def _user_prompt(config: HookConfig, payload: dict[str, Any]) -> dict[str, Any] | None:
    prompt = payload.get("prompt")
    if not isinstance(prompt, str):
        raise PayloadError("the UserPromptSubmit payload has no prompt")
    return _inject(config, payload, "UserPromptSubmit", prompt)


def _sync_after_session(cwd: str) -> None:
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
    """Keep the capture waiting, then one request: the host reads what is new and stores it."""
    from hybrid_memory.integrations import pending

    session_id, transcript, cwd = payload["session_id"], _transcript(payload), _cwd(payload)
    pending.keep(config, session_id, transcript, cwd)  # before trying: a failure cannot lose it
    if not config.detach:
        pending.attempt(config, session_id)
        if ended:
            _sync_after_session(cwd)
        return
    # Taken before the fork and inherited by the child: a session starting now waits for it.
    import fcntl

    lock_fd = os.open(os.path.join(config.state_dir, CAPTURE_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
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


def _unavailable(exc: BaseException) -> str:
    """The line a starting session shows when the memory cannot serve it; a file the store cannot open
    is named by the host's message, and left as it is."""
    why = _describe(exc).rstrip(".")
    return (
        f"hybrid-memory: no memory in this session: {why}. The file is left as it is: restore it from a "
        "backup or move it aside (the store starts empty), then `hybrid-memory stats` checks the store."
        if " store at " in why and " failed: " in why
        else f"hybrid-memory: no memory in this session: {why}."
    )


def _waiting_captures(config: HookConfig, event: str, output: dict[str, Any] | None) -> dict[str, Any] | None:
    """A starting session is told of captures that keep failing (``systemMessage``: people see it)."""
    if event != "SessionStart":
        return output
    from hybrid_memory.integrations.pending import notice

    line = notice(config.data_dir)
    if not line:
        return output
    told = (output or {}).get("systemMessage")
    return {**(output or {}), "systemMessage": f"{told}\n{line}" if told else line}


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
        if name == "SessionStart" and config is not None and not isinstance(exc, PayloadError):
            output = {"systemMessage": _unavailable(exc)}  # people see it; the session starts
    if config is None or name is None:
        return 0
    try:
        output = _waiting_captures(config, name, output)
        if output is not None:
            stdout.write(jsonc.dumps(output) + "\n")
            stdout.flush()
        from hybrid_memory.integrations.pending import retry_detached

        retry_detached(config)  # what other sessions left waiting, in a process of its own
    except Exception as exc:
        stderr.write(f"hybrid-memory hook {event}: {_describe(exc)}\n")
    return 0


def main(argv: list[str]) -> int:
    """``hybrid-memory hook <event>`` (called by :mod:`hybrid_memory._entry` before the CLI loads).

    The process ends here once its output is flushed, without the interpreter's teardown: unloading
    the modules costs a prompt hook a tenth of its time, and nothing of the hook's is left to close.
    """
    event = argv[0] if argv else ""
    code = run(event, sys.stdin, sys.stdout, sys.stderr)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nobody is left to read it
            continue
    os._exit(code)
