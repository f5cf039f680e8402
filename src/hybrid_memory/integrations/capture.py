"""Capture: the new part of a session's transcript remembered as its thread, through the host.

Each session keeps a small offset file (``hooks/capture/<session>.json`` in the data dir):
the byte offset read so far and a fingerprint of the bytes just before it. A transcript
that shrank or was rewritten no longer matches its fingerprint and is read again from the
start; that stores nothing twice, because a message's memory id derives from the session
and the entry's uuid. Nor is a reply that carries nothing ("Done.", "Checking."), or a
question or reply saying word for word what an earlier one of the project said (asked
again in another session); a statement said again is stored again, since restating a
rule reinforces its note. The project keeps the hashes of what it stored
(``hooks/said/<project>.json``). The offset moves only after the host acknowledged the
write, so a capture that failed (host down, store down) is retried whole by the next one,
which :mod:`~hybrid_memory.integrations.pending` makes sure comes.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from hybrid_memory import codestate
from hybrid_memory.host.client import connect
from hybrid_memory.integrations.config import (
    CAPTURE_LOCK,
    HookConfig,
    project_of,
    safe_name,
    said_file,
)
from hybrid_memory.integrations.transcript import Message, read_from
from hybrid_memory.service.knowledge import HARVEST_META
from hybrid_memory.text.filler import is_filler
from hybrid_memory.text.questions import asks
from hybrid_memory.text.words import normalized

BATCH = 200
"""Messages per remember_thread call: a long first capture goes in several bounded requests."""
HARVEST = {HARVEST_META: True}
"""remember_thread's ``_meta`` from capture: the host also draws notes, entities and the digest from it."""
_FINGERPRINT_BYTES = 256
_SAID_KEPT = 20_000
_REPEAT_MIN_WORDS = 3
"""A repeat shorter than this ("yes", "go on") says nothing on its own; it is kept in its thread."""


class CaptureBusy(TimeoutError):
    """Another process captures the session now (it holds the session's lock)."""


@dataclass
class Captured:
    stored: int
    unchanged: int
    messages: int
    skipped: dict[str, int] = field(default_factory=dict)
    """The lines read that gave no message, by kind."""


def _fingerprint(path: Path, offset: int) -> str:
    with path.open("rb") as f:
        f.seek(max(0, offset - _FINGERPRINT_BYTES))
        return hashlib.sha256(f.read(min(offset, _FINGERPRINT_BYTES))).hexdigest()


def _start(path: Path, state_file: Path) -> int:
    """Where to read from: the saved offset, or 0 when the transcript is not the one it was taken on."""
    try:
        state = json.loads(state_file.read_text())
        offset = int(state["offset"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0
    if offset <= 0 or path.stat().st_size < offset or _fingerprint(path, offset) != state.get("fingerprint"):
        return 0
    return offset


def _save(path: Path, state_file: Path, end: int) -> None:
    tmp = state_file.with_suffix(".tmp")
    tmp.write_text(
        json.dumps({"transcript": str(path), "offset": end, "fingerprint": _fingerprint(path, end)})
    )
    os.replace(tmp, state_file)


@contextlib.contextmanager
def _locked(lock_path: Path, mode: int, timeout_s: float) -> Iterator[bool]:
    """Hold ``lock_path`` (flock ``mode``) for the block; yields False when it stayed taken ``timeout_s``."""
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                fcntl.flock(fd, mode | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    yield False
                    return
                time.sleep(0.02)
        yield True
    finally:
        os.close(fd)


def settled(config: HookConfig, timeout_s: float) -> bool:
    """Wait (within ``timeout_s``) until no capture is in progress: a new session then sees the last one."""
    with _locked(config.state_dir / CAPTURE_LOCK, fcntl.LOCK_EX, timeout_s) as free:
        return free


def capture(
    config: HookConfig, session_id: str, transcript: Path, cwd: Path, *, lock_timeout_s: float | None = None
) -> Captured:
    """Remember what the transcript gained since the last capture of this session; idempotent.

    Another capture of the session in progress is waited for ``lock_timeout_s`` (default: the
    hooks' timeout), then this one gives up with :class:`CaptureBusy`.
    """
    state_dir = config.state_dir / "capture"
    state_file = state_dir / f"{safe_name(session_id)}.json"
    wait = config.timeout_s if lock_timeout_s is None else lock_timeout_s
    with _locked(state_dir / f"{safe_name(session_id)}.lock", fcntl.LOCK_EX, wait) as ours:
        if not ours:
            raise CaptureBusy(f"another capture of session {session_id} held its lock for {wait:g} s")
        reading = read_from(transcript, _start(transcript, state_file))
        with_code(reading.messages, cwd)
        said = _Said(config, cwd)
        messages = said.worth_storing(reading.messages)
        done = Captured(0, 0, len(messages), reading.skipped)
        if messages:
            with connect(config.data_dir, cwd, timeout_s=config.timeout_s) as host:
                for i in range(0, len(messages), BATCH):
                    batch = [m.as_argument() for m in messages[i : i + BATCH]]
                    arguments = {"thread_id": session_id, "messages": batch}
                    result = host.call_tool("remember_thread", arguments, HARVEST)
                    done.stored += int(result.get("stored", 0))
                    done.unchanged += int(result.get("unchanged", 0))
            said.save()
        _save(transcript, state_file, reading.end)
        return done


def with_code(messages: list[Message], cwd: Path) -> None:
    """Give each message of a turn (a prompt and all that follows it) the state of the files the
    turn edited: a memory of that turn can then tell when they changed since."""
    turn: list[Message] = []
    for message in [*messages, None]:
        if message is None or (message.role == "user" and turn):
            edited = [path for m in turn for path in m.edited]
            code = codestate.snapshot(cwd, dict.fromkeys(edited)) if edited else None
            for m in turn:
                m.code = code
            turn = []
        if message is not None:
            turn.append(message)


class _Said:
    """What the project's captures stored, as hashes of its normalized texts (message id -> hash)."""

    def __init__(self, config: HookConfig, cwd: Path) -> None:
        self.path = said_file(config, project_of(config, cwd))
        try:
            loaded = json.loads(self.path.read_text())
        except (OSError, ValueError):
            loaded = {}
        self.by_id: dict[str, str] = loaded if isinstance(loaded, dict) else {}

    def worth_storing(self, messages: list[Message]) -> list[Message]:
        """``messages`` without filler, and without a question or a reply the project stored word for word
        under another id."""
        owner = {h: i for i, h in self.by_id.items()}
        kept = []
        for message in messages:
            if is_filler(message.text):
                continue
            flat = normalized(message.text)
            # A rule stated again is kept: restating it is what reinforces its note.
            if len(flat.split()) >= _REPEAT_MIN_WORDS and (message.role != "user" or asks(message.text)):
                digest = hashlib.sha256(flat.encode()).hexdigest()[:16]
                if owner.setdefault(digest, message.id) != message.id:
                    continue
                self.by_id[message.id] = digest
            kept.append(message)
        return kept

    def save(self) -> None:
        """Merged with what other sessions' captures saved meanwhile (they may run at the same time)."""
        with _locked(self.path.with_suffix(".lock"), fcntl.LOCK_EX, 10.0):
            try:
                current = json.loads(self.path.read_text())
            except (OSError, ValueError):
                current = {}
            merged = {**(current if isinstance(current, dict) else {}), **self.by_id}
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(dict(list(merged.items())[-_SAID_KEPT:])))
            os.replace(tmp, self.path)
