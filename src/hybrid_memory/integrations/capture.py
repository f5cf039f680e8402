"""Capture, on the host: what a session's transcript gained since the last capture, remembered.

A capture hook sends one :data:`~hybrid_memory.host.wire.CAPTURE` request (the session, its
transcript's path, its directory) and the host, which owns the store, does the rest here:

- It reads the transcript from the session's *position*: where its last capture stopped. The
  host keeps it in memory while it runs (with a fingerprint of the bytes before it: a transcript
  that shrank or was rewritten is read again from the start), and the store keeps it for the
  next host: each captured message's memory records ``transcript_at``, the byte offset of the
  line it begins on, and a host that knows no position starts at the last one stored.
- It leaves out a message already stored (so a capture cut short, its host killed, is finished
  by the next one and nothing is stored twice; a message's memory id derives from the session
  and the entry's uuid), a reply that carries nothing ("Done.", "Checking."), and a question or
  reply saying word for word what the project stored under another message (asked again in
  another session): each question and reply is stored with ``repeat_key``, a digest of its
  normalized words, and one filtered lookup per batch finds the keys the project holds. A
  statement said again is stored again, since restating a rule reinforces its note.
- It stores the rest as the session's thread, :data:`BATCH` messages a write, with the notes,
  entities and digest drawn from them (``harvest``).

Nothing is kept beside the store, so forgetting a project, a thread or a memory forgets what
capture knew of it too. Data dirs of earlier versions kept offsets and said-hashes in the hooks'
folder (``hooks/capture``, ``hooks/said``, ``hooks/sessions``): the host removes them unread when
it starts (:func:`drop_earlier_state`); a session captured by an earlier version is read again
from its start once, which stores nothing twice.
"""

from __future__ import annotations

import hashlib
import logging
import shutil
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.abc

from hybrid_memory import codestate
from hybrid_memory.errors import InvalidInputError
from hybrid_memory.integrations.config import hooks_dir
from hybrid_memory.integrations.hosted import answer, session_scope
from hybrid_memory.integrations.transcript import Message, Reading, read_from, started_in
from hybrid_memory.models import MemoryFilter, MemoryKind, MessageIn, Scope
from hybrid_memory.service import MemoryService
from hybrid_memory.service.writes.drafts import ThreadDraft
from hybrid_memory.service.writes.threads import memory_id
from hybrid_memory.service.writes.validation import replaced_identifier
from hybrid_memory.text.filler import is_filler
from hybrid_memory.text.questions import asks
from hybrid_memory.text.words import normalized
from hybrid_memory.tools.app import AppContext

logger = logging.getLogger(__name__)

BATCH = 200
"""Messages per write: a long first capture is stored in several bounded steps."""
EARLIER_STATE = ("capture", "said", "sessions")
"""The folders of ``hooks/`` in which earlier versions kept capture state beside the store."""
_FINGERPRINT_BYTES = 256
_REPEAT_MIN_WORDS = 3
"""A repeat shorter than this ("yes", "go on") says nothing on its own; it is kept in its thread."""
_PAGE = 256


@dataclass
class Captured:
    """What one capture did."""

    stored: int
    unchanged: int
    messages: int
    """The messages worth storing that the read found (new or stored before)."""
    skipped: dict[str, int] = field(default_factory=dict)
    """The lines read that gave no message, by kind."""

    def as_result(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class _Position:
    transcript: str
    offset: int
    fingerprint: str


def _fingerprint(path: Path, offset: int) -> str:
    with path.open("rb") as f:
        f.seek(max(0, offset - _FINGERPRINT_BYTES))
        return hashlib.sha256(f.read(min(offset, _FINGERPRINT_BYTES))).hexdigest()


def _starts_a_line(path: Path, offset: int) -> bool:
    """Whether ``offset`` is where a line of ``path`` begins (the file still holds what was read)."""
    if offset == 0:
        return True
    if path.stat().st_size < offset:
        return False
    with path.open("rb") as f:
        f.seek(offset - 1)
        return f.read(1) == b"\n"


def _home(transcript: Path, cwd: Path) -> Path:
    """The directory the session started in: an agent that cd'd into a subfolder does not move its
    project. A start directory not on this machine names no repository: the hook's ``cwd`` does."""
    home = started_in(transcript)
    return Path(home) if home and Path(home).is_dir() else cwd


def _read(transcript: Path, start: int, cwd: Path) -> Reading:
    reading = read_from(transcript, start, str(cwd))
    with_code(reading.messages, cwd)
    return reading


def repeat_key(message: Message) -> str | None:
    """The digest of a question's or a reply's normalized words; None for what is kept even when said
    again: a statement of the user's (restating a rule reinforces its note), a text of a few words."""
    flat = normalized(message.text)
    if len(flat.split()) < _REPEAT_MIN_WORDS or (message.role == "user" and not asks(message.text)):
        return None
    return hashlib.sha256(flat.encode()).hexdigest()[:16]


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


async def _stored_position(service: MemoryService, scope: Scope, thread_id: str, transcript: Path) -> int:
    """Where the session's last capture stored its last message, as the store says; 0 when it says
    nothing (no capture yet, or an earlier version's) or the transcript no longer matches."""
    flt = MemoryFilter(scope=scope, thread_id=thread_id, kinds=[MemoryKind.MESSAGE])
    last, offset = 0, None
    while True:
        page, offset = await service.stores.vectors.scroll(flt, _PAGE, offset)
        last = max([last, *(m.transcript_at or 0 for m in page)])
        if offset is None:
            break
    return last if await anyio.to_thread.run_sync(_starts_a_line, transcript, last) else 0


async def _unstored(
    service: MemoryService, scope: Scope, thread_id: str, messages: list[Message]
) -> list[Message]:
    """``messages`` without those the thread holds already."""
    thread, _ = replaced_identifier(thread_id, "thread_id")
    held: set[str] = set()
    for i in range(0, len(messages), BATCH):
        batch = messages[i : i + BATCH]
        ids = {memory_id(scope, thread, replaced_identifier(m.id, "id")[0], 0): m.id for m in batch}
        held.update(ids[m.id] for m in await service.stores.vectors.get(scope, list(ids)))
    return [m for m in messages if m.id not in held]


async def _said_before(service: MemoryService, scope: Scope, keys: list[str]) -> set[str]:
    """Those of ``keys`` the project's memories carry."""
    found: set[str] = set()
    if not keys:
        return found
    flt = MemoryFilter(scope=scope, kinds=[MemoryKind.MESSAGE], repeat_keys=keys)
    offset = None
    while True:
        page, offset = await service.stores.vectors.scroll(flt, _PAGE, offset)
        found.update(m.repeat_key for m in page if m.repeat_key)
        if offset is None:
            return found


def _argument(message: Message, key: str | None) -> MessageIn:
    given = message.as_argument()
    return MessageIn.model_validate({**given, "repeat_key": key} if key else given)


def _request(params: Mapping[str, Any]) -> tuple[str, Path, Path]:
    session_id, transcript, cwd = params.get("session_id"), params.get("transcript"), params.get("cwd")
    if not isinstance(session_id, str) or not session_id or not isinstance(transcript, str) or not transcript:
        raise InvalidInputError(
            "a capture needs params.session_id and params.transcript (the transcript's path), and params.cwd"
        )
    path = Path(transcript)
    if not path.is_file():
        raise InvalidInputError(f"the transcript {path} does not exist; nothing captured")
    return session_id, path, Path(cwd) if isinstance(cwd, str) and cwd else path.parent


class Captures:
    """The host's captures: each session's position while the host runs, one capture of a session at
    a time (a second waits for the first, then finds what is left)."""

    def __init__(self) -> None:
        self._positions: dict[str, _Position] = {}
        self._locks: dict[str, anyio.Lock] = {}

    def _start(self, session_id: str, transcript: Path) -> int | None:
        """The position this host keeps for the session; 0 when the transcript changed under it."""
        known = self._positions.get(session_id)
        if known is None or known.transcript != str(transcript):
            return None
        if transcript.stat().st_size < known.offset:
            return 0
        if _fingerprint(transcript, known.offset) != known.fingerprint:
            return 0
        return known.offset

    async def capture(self, app: AppContext, params: Mapping[str, Any]) -> Captured:
        """Remember what the transcript in ``params`` gained since the session's last capture."""
        session_id, transcript, cwd = _request(params)
        async with self._locks.setdefault(session_id, anyio.Lock()):
            await app.ready()
            cwd = await anyio.to_thread.run_sync(_home, transcript, cwd)
            scope = await session_scope(app, cwd)
            service = app.service
            start = await anyio.to_thread.run_sync(self._start, session_id, transcript)
            if start is None:
                start = await _stored_position(service, scope, session_id, transcript)
            reading = await anyio.to_thread.run_sync(_read, transcript, start, cwd)
            worth = [m for m in reading.messages if not is_filler(m.text)]
            new = await _unstored(service, scope, session_id, worth)
            keys = {m.id: repeat_key(m) for m in new}
            said = await _said_before(service, scope, sorted({k for k in keys.values() if k}))
            kept: list[MessageIn] = []
            for message in new:
                key = keys[message.id]
                if key is not None and key in said:
                    continue  # said word for word before, in the project: a repeat
                if key is not None:
                    said.add(key)
                kept.append(_argument(message, key))
            done = Captured(0, len(worth) - len(new), len(worth) - len(new) + len(kept), reading.skipped)
            for i in range(0, len(kept), BATCH):
                draft = ThreadDraft(thread_id=session_id, messages=kept[i : i + BATCH])
                result = await service.remember_thread(scope, draft, harvest=True)
                done.stored += result.stored
                done.unchanged += result.unchanged
            fingerprint = await anyio.to_thread.run_sync(_fingerprint, transcript, reading.end)
            self._positions[session_id] = _Position(str(transcript), reading.end, fingerprint)
            return done

    async def serve(self, first_line: bytes, stream: anyio.abc.ByteStream, app: AppContext) -> None:
        """Answer the capture request in ``first_line`` on ``stream``; the caller closes the stream. The
        capture goes on to its end when the hook stops waiting: the next one then finds it done."""

        async def captured(params: dict[str, Any]) -> dict[str, Any]:
            return (await self.capture(app, params)).as_result()

        await answer(first_line, stream, captured, "a capture")


async def drop_earlier_state(data_dir: Path) -> None:
    """Remove, unread, what earlier versions kept of captures in the hooks' folder (:data:`EARLIER_STATE`)."""
    for name in EARLIER_STATE:
        folder = Path(hooks_dir(data_dir)) / name
        if await anyio.Path(folder).is_dir():
            await anyio.to_thread.run_sync(partial(shutil.rmtree, folder, ignore_errors=True))
