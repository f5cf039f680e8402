"""Capture on the host: where a session's next capture starts, and what it leaves out.

The host's capture (:class:`~hybrid_memory.integrations.capture.Captures`) over a service on
in-memory stores and the fake embedder; a new ``Captures`` is a host started anew.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from hybrid_memory.integrations import capture as capture_module
from hybrid_memory.integrations.capture import Captured, Captures
from hybrid_memory.models import MemoryFilter, MemoryKind, Scope
from hybrid_memory.service import MemoryService
from hybrid_memory.tools.app import AppContext

from .conftest import SCOPE, Harness


def _line(session: str, i: int, role: str, text: str) -> str:
    entry = {
        "type": role,
        "uuid": f"{session}-0000-4000-8000-{i:012d}",
        "timestamp": f"2026-11-20T10:00:{i % 60:02d}.000Z",
        "cwd": "/nowhere/ledger",
        "sessionId": session,
        "message": {"role": role, "content": text},
    }
    return json.dumps(entry) + "\n"


def _write(path: Path, session: str, said: list[tuple[str, str]], first: int = 0) -> None:
    with path.open("a" if first else "w") as f:
        f.writelines(_line(session, first + i, role, text) for i, (role, text) in enumerate(said))


def _app(service: MemoryService, scope: Scope = SCOPE) -> AppContext:
    app = AppContext(scope)
    app.attach(service)
    return app


async def _capture(captures: Captures, app: AppContext, session: str, transcript: Path) -> Captured:
    params: dict[str, Any] = {
        "session_id": session,
        "transcript": str(transcript),
        "cwd": str(transcript.parent),
    }
    return await captures.capture(app, params)


async def _thread(harness: Harness, thread: str, scope: Scope = SCOPE) -> list[str]:
    flt = MemoryFilter(scope=scope, thread_id=thread, kinds=[MemoryKind.MESSAGE])
    page, _ = await harness.vectors.scroll(flt, 1000)
    return sorted(m.text for m in page)


TURNS = [
    ("user", "How do I regenerate the OpenAPI client?"),
    ("assistant", "Checking."),
    ("assistant", "Run `make openapi` in the api folder."),
    ("user", "yes"),
]


async def test_the_next_capture_starts_where_the_last_stopped_unless_the_transcript_was_rewritten(
    harness: Harness, tmp_path: Path
) -> None:
    transcript, captures, app = tmp_path / "s1.jsonl", Captures(), _app(harness.service)
    _write(transcript, "s1", TURNS[:2])
    first = await _capture(captures, app, "s1", transcript)
    assert (first.stored, first.messages) == (1, 1)  # "Checking." carries nothing
    _write(transcript, "s1", TURNS[2:], first=2)
    second = await _capture(captures, app, "s1", transcript)
    assert (second.stored, second.unchanged, second.messages) == (2, 0, 2)  # only what was added
    assert await _capture(captures, app, "s1", transcript) == Captured(0, 0, 0, {})
    # Rewritten, the same size: read again from the start, and nothing is stored twice.
    text = transcript.read_text().replace("make openapi", "make OPENAPI")
    transcript.write_text(text)
    again = await _capture(captures, app, "s1", transcript)
    assert (again.stored, again.unchanged) == (0, 3)
    assert len(await _thread(harness, "s1")) == 3


async def test_a_question_or_reply_said_again_in_another_session_is_dropped_by_the_host(
    harness: Harness, tmp_path: Path
) -> None:
    captures, app = Captures(), _app(harness.service)
    _write(tmp_path / "s1.jsonl", "s1", TURNS)
    await _capture(captures, app, "s1", tmp_path / "s1.jsonl")
    again = [
        ("user", "how do I regenerate the openapi client"),  # asked again, word for word
        ("assistant", "Run make openapi in the api folder."),  # answered again
        ("user", "yes"),  # too short to be a repeat
        ("user", "Never push to main directly."),  # a rule stated: kept, it reinforces its note
    ]
    _write(tmp_path / "s2.jsonl", "s2", again)
    done = await _capture(captures, app, "s2", tmp_path / "s2.jsonl")
    assert done.stored == 2
    assert await _thread(harness, "s2") == ["Never push to main directly.", "yes"]
    _write(tmp_path / "s3.jsonl", "s3", again[3:])
    await _capture(Captures(), app, "s3", tmp_path / "s3.jsonl")  # another host: the store knows
    assert await _thread(harness, "s3") == ["Never push to main directly."]
    # Another project has not said it.
    garden = Scope(project="garden")
    await _capture(captures, _app(harness.service, garden), "s4", tmp_path / "s2.jsonl")
    assert len(await _thread(harness, "s4", garden)) == 4


async def test_a_new_host_starts_where_the_store_says_and_brings_back_nothing_forgotten(
    harness: Harness, tmp_path: Path
) -> None:
    transcript, app = tmp_path / "s1.jsonl", _app(harness.service)
    said = [("user", f"Question {i}: where do the {i} invoices go?") for i in range(6)]
    _write(transcript, "s1", said)
    await _capture(Captures(), app, "s1", transcript)
    flt = MemoryFilter(scope=SCOPE, thread_id="s1")
    page, _ = await harness.vectors.scroll(flt, 100)
    forgotten = next(m for m in page if m.text.startswith("Question 0:"))
    await harness.service.forget(SCOPE, ids=[forgotten.id])
    _write(transcript, "s1", [("user", "Question 6: and the refunds?")], first=6)
    done = await _capture(Captures(), app, "s1", transcript)  # a host that knows no position
    assert (done.stored, done.unchanged) == (1, 1)  # the last one stored is read again, nothing more
    texts = await _thread(harness, "s1")
    assert len(texts) == 6
    assert not any(t.startswith("Question 0:") for t in texts)


async def test_a_capture_cut_short_is_finished_by_the_next_with_nothing_stored_twice(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    transcript, app = tmp_path / "s1.jsonl", _app(harness.service)
    said = [
        ("user" if i % 2 == 0 else "assistant", f"Turn {i} says its own thing number {i}.") for i in range(7)
    ]
    _write(transcript, "s1", said)
    monkeypatch.setattr(capture_module, "BATCH", 3)
    remember = harness.service.remember_thread
    calls = 0

    async def dies_after_one(*args: Any, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls > 1:
            raise RuntimeError("the host was killed")
        return await remember(*args, **kwargs)

    monkeypatch.setattr(harness.service, "remember_thread", dies_after_one)
    with pytest.raises(RuntimeError):
        await _capture(Captures(), app, "s1", transcript)
    assert len(await _thread(harness, "s1")) == 3
    monkeypatch.setattr(harness.service, "remember_thread", remember)
    done = await _capture(Captures(), app, "s1", transcript)  # the next host
    assert (done.stored, done.unchanged) == (4, 1)
    assert len(await _thread(harness, "s1")) == 7
