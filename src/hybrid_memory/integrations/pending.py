"""Captures not done yet, kept on disk until the host has stored them: no capture is ever dropped.

A capture hook writes its session's file (``hooks/pending/<session>.json`` in the data
dir: transcript, session id, cwd, attempts, last error) before it tries, and the file
goes only once the host acknowledged the write. What fails meanwhile (the host down or
slow to start, a command such as ``hybrid-memory export`` holding the store, the store
failing) stays, and is done later:

- by the capture itself, detached from the session: it waits while a command holds the
  store and tries again, for up to :data:`PATIENCE_S`;
- by the next hook of any session, in a detached process that never delays it;
- by a host when it starts (:func:`retry`), so a restart finds them all.

What keeps failing is told where a person sees it: the next session's start
(:func:`notice`) and ``hybrid-memory stats``.

Stdlib only: the hooks import it.
"""

from __future__ import annotations

import fcntl
import os
import sys
import time

from hybrid_memory.host import jsonc
from hybrid_memory.integrations.config import CAPTURE_LOCK, HookConfig, hooks_dir, safe_name

TYPE_CHECKING = False
if TYPE_CHECKING:  # ``typing`` and ``pathlib`` are among the slowest of a prompt hook's imports
    from collections.abc import Callable, Iterable
    from typing import Any

    from hybrid_memory.host.lock import StrPath

ANSWER_S = 600.0
"""How long a capture waits for the host's answer (the first capture of a long session stores much)."""
PATIENCE_S = 1800.0
"""How long a detached capture keeps trying (waiting for a command that holds the store, or for the host)."""
RETRY_AFTER_S = 30.0
"""A hook retries a capture that failed at most this often."""
LOST_AFTER_S = 600.0
"""A capture not tried after this long has lost its process: the next hook takes it over."""
_BACKOFF_S = (2.0, 5.0, 10.0, 30.0)
_POLL_S = 0.25
_RETRY_LOCK = "retry.lock"


def _dir(config: HookConfig) -> str:
    return _pending_dir(config.state_dir)


def _pending_dir(state_dir: str) -> str:
    return os.path.join(state_dir, "pending")


def _file(config: HookConfig, session_id: str) -> str:
    return os.path.join(_dir(config), f"{safe_name(session_id)}.json")


def _read(path: str) -> dict[str, Any] | None:
    try:
        with open(path) as f:
            entry = jsonc.loads(f.read())
    except (OSError, ValueError):
        return None
    return entry if isinstance(entry, dict) and isinstance(entry.get("session_id"), str) else None


def _write(path: str, entry: dict[str, Any]) -> None:
    folder, name = os.path.split(path)
    os.makedirs(folder, exist_ok=True)
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(jsonc.dumps(entry))
    os.replace(tmp, path)


def keep(config: HookConfig, session_id: str, transcript: StrPath, cwd: StrPath) -> None:
    """Record that ``session_id`` waits to be captured; what earlier attempts left is kept."""
    path = _file(config, session_id)
    entry = _read(path) or {"session_id": session_id, "attempts": 0, "last_error": None, "since": time.time()}
    # A new token each time: a capture that began before this one cannot take it for done.
    entry.update(
        transcript=os.fspath(transcript), cwd=os.fspath(cwd), token=f"{os.getpid()}-{time.time_ns()}"
    )
    _write(path, entry)


def done(config: HookConfig, session_id: str, token: str | None = None) -> None:
    """The host has the session (as it was when ``token`` was kept, if given): nothing waits any more."""
    path = _file(config, session_id)
    if token is not None and (_read(path) or {}).get("token") != token:
        return  # kept again since this capture began: what was added waits for its own
    try:
        os.unlink(path)
    except FileNotFoundError:
        return


def failed(config: HookConfig, session_id: str, error: str) -> None:
    """Count a failed attempt and keep its error, for the next one and for people."""
    path = _file(config, session_id)
    entry = _read(path)
    if entry is None:
        return  # done meanwhile by another process
    entry.update(
        attempts=int(entry.get("attempts") or 0) + 1, last_error=_redacted(error), last_attempt=time.time()
    )
    _write(path, entry)


def waiting(config: HookConfig) -> list[dict[str, Any]]:
    """The captures that wait, oldest first."""
    return _waiting_in(config.state_dir)


def _waiting_in(state_dir: str) -> list[dict[str, Any]]:
    folder = _pending_dir(state_dir)
    try:
        names = [n for n in os.listdir(folder) if n.endswith(".json") and n[0] != "."]
    except OSError:
        return []
    entries = [e for e in (_read(os.path.join(folder, n)) for n in names) if e is not None]
    return sorted(entries, key=lambda e: float(e.get("since") or 0))


def notice(data_dir: StrPath) -> str | None:
    """One line for people when captures failed and still wait: how many, and the last error."""
    state_dir = hooks_dir(data_dir)
    failing = [e for e in _waiting_in(state_dir) if int(e.get("attempts") or 0) > 0]
    if not failing:
        return None
    last = max(failing, key=lambda e: float(e.get("last_attempt") or 0))
    sessions = "1 session waits" if len(failing) == 1 else f"{len(failing)} sessions wait"
    return (
        f"hybrid-memory: {sessions} to be captured (retried by the next hook and when the memory host "
        f"starts; see {os.path.join(state_dir, 'hooks.log')}); last error: "
        f"{_redacted(str(last.get('last_error')))}"
    )


def describe(exc: BaseException) -> str:
    """One line for a failure, redacted: it is written to disk and shown to people."""
    text = _redacted(" ".join(str(exc).split()))[:300]
    return text or type(exc).__name__


def _redacted(error: str) -> str:
    """``error`` as stored text is kept: an error may quote a connection URL, a token or a line pasted
    in the session. Whole before it is cut, so no secret is cut in two and half kept."""
    from hybrid_memory.service.redaction import redact  # stdlib only, loaded when an error is told

    return redact(error).text


def attempt(config: HookConfig, session_id: str) -> None:
    """Capture the waiting session once: one request to the host, which reads the transcript and stores
    what is new (:mod:`hybrid_memory.integrations.capture`); it stops waiting when that succeeds, or
    when its transcript is gone."""
    from hybrid_memory.host import wire
    from hybrid_memory.host.client import ask

    entry = _read(_file(config, session_id))
    if entry is None:
        return  # captured meanwhile by another process
    transcript, token = str(entry.get("transcript")), entry.get("token")
    if not os.path.isfile(transcript):
        done(config, session_id, token)
        _log(
            config.state_dir, f"capture of session {session_id} dropped: its transcript {transcript} is gone"
        )
        return
    params = {"session_id": session_id, "transcript": transcript, "cwd": str(entry.get("cwd"))}
    try:
        request = wire.capture_request(params)
        ask(config.data_dir, request, timeout_s=config.timeout_s, answer_within_s=ANSWER_S)
    except Exception as exc:
        failed(config, session_id, describe(exc))
        raise
    done(config, session_id, token)


def settled(config: HookConfig, timeout_s: float) -> bool:
    """Wait (within ``timeout_s``) until no capture hook is in progress: a new session then sees the last
    one. False when one still was."""
    os.makedirs(config.state_dir, exist_ok=True)
    fd = os.open(os.path.join(config.state_dir, CAPTURE_LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                return True
            except BlockingIOError:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.02)
    finally:
        os.close(fd)


def _command_holding(config: HookConfig) -> str | None:
    from hybrid_memory.host.lock import command_holding

    return command_holding(config.data_dir)


def patiently(
    config: HookConfig,
    session_id: str,
    *,
    patience_s: float = PATIENCE_S,
    waiting_starts: Callable[[], None] | None = None,
) -> None:
    """Capture the waiting session, waiting while a command holds the store and trying again while the
    host fails, for up to ``patience_s``; what still fails then waits for a retry. ``waiting_starts``
    is called once before the first wait (a session that starts meanwhile need not wait for this one)."""
    deadline = time.monotonic() + patience_s
    tries = 0
    while True:
        holder = _command_holding(config)
        if holder is not None and waiting_starts is not None:
            waiting_starts()
            waiting_starts = None
        while holder is not None and time.monotonic() < deadline:
            time.sleep(_POLL_S)  # the command finishes, then a host can start
            holder = _command_holding(config)
        try:
            attempt(config, session_id)
            return
        except Exception:
            if time.monotonic() > deadline:
                raise
        if waiting_starts is not None:
            waiting_starts()
            waiting_starts = None
        time.sleep(_BACKOFF_S[min(tries, len(_BACKOFF_S) - 1)])
        tries += 1


def retry(config: HookConfig, *, skip: Iterable[str] = (), everything: bool = False) -> int:
    """Capture what waits (all of it with ``everything``, else what failed long enough ago); how many
    stopped waiting. One retry at a time: returns 0 at once when another process retries."""
    os.makedirs(config.state_dir, exist_ok=True)
    fd = os.open(os.path.join(config.state_dir, _RETRY_LOCK), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return 0
        due = _due(config, skip, everything)
        if not everything and _command_holding(config) is not None:
            return 0  # no host can start before the command is done: the captures' own processes wait
        # Those whose transcript is gone need no host: they stop waiting whatever the host does.
        gone = [e for e in due if not os.path.isfile(str(e.get("transcript")))]
        live = [e for e in due if e not in gone]
        if live and not _host_answers(config, live):
            live = []
        return sum(_retried(config, entry) for entry in gone + live)
    finally:
        os.close(fd)


def _retried(config: HookConfig, entry: dict[str, Any]) -> bool:
    try:
        attempt(config, entry["session_id"])
    except Exception as exc:
        _log(config.state_dir, f"retried capture of session {entry['session_id']} failed: {describe(exc)}")
        return False
    return True


def _host_answers(config: HookConfig, due: list[dict[str, Any]]) -> bool:
    """Whether the host answers (started when none runs); when not, each capture due has failed again,
    once (not once per capture, each after the whole wait)."""
    from hybrid_memory.host.client import HostError, open_socket

    try:
        open_socket(config.data_dir, config.timeout_s).close()
    except (HostError, OSError) as exc:
        for entry in due:
            failed(config, entry["session_id"], describe(exc))
        _log(config.state_dir, f"{len(due)} waiting captures not retried: {describe(exc)}")
        return False
    return True


def retry_at_start(data_dir: StrPath) -> int:
    """Capture everything that waits, for a host that has just opened the stores; how many were done."""
    if not _waiting_in(hooks_dir(data_dir)):
        return 0
    try:
        config = HookConfig.from_env()._replace(data_dir=data_dir)
    except ValueError as exc:  # a hook setting out of range: the hooks say so themselves
        _log(hooks_dir(data_dir), f"pending captures not retried: {exc}")
        return 0
    return retry(config, everything=True)


def _due(config: HookConfig, skip: Iterable[str], everything: bool) -> list[dict[str, Any]]:
    skipped = set(skip)
    return [e for e in waiting(config) if e["session_id"] not in skipped and (everything or _is_due(e))]


def _is_due(entry: dict[str, Any]) -> bool:
    """A failed capture, RETRY_AFTER_S after its last attempt; one never tried, once its own process
    has had LOST_AFTER_S (it was killed, or the machine stopped)."""
    now = time.time()
    if int(entry.get("attempts") or 0) == 0:
        return now - float(entry.get("since") or 0) >= LOST_AFTER_S
    return now - float(entry.get("last_attempt") or 0) >= RETRY_AFTER_S


def retry_detached(config: HookConfig) -> None:
    """When captures are due for a retry, retry them in a detached process; returns at once."""
    if not _due(config, (), everything=False):
        return
    sys.stdout.flush()
    sys.stderr.flush()
    if os.fork() != 0:
        return
    os.setsid()
    detach_streams(config)
    try:
        retry(config)
    finally:
        os._exit(0)


def detach_streams(config: HookConfig) -> None:
    """A detached hook process: off Claude Code's pipes (it waits for them to close), stderr to the log."""
    log = os.open(os.path.join(config.state_dir, "hooks.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 0)
    os.dup2(null, 1)
    os.dup2(log, 2)
    os.close(null)
    os.close(log)


def _log(state_dir: str, line: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    try:
        os.makedirs(state_dir, exist_ok=True)
        fd = os.open(os.path.join(state_dir, "hooks.log"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a") as f:
            f.write(f"{stamp} {line}\n")
    except OSError:
        return
