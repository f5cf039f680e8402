"""``hybrid-memory hook <event>`` as Claude Code runs it: a process, JSON on stdin, against a real host.

The first hook finds no host and starts one (headless, detached); the fixture stops it.
Claude Code itself drives the same hooks in ``test_claude_code.py``.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hybrid_memory.integrations.config import HookConfig
from hybrid_memory.integrations.pending import settled
from tests.e2e.claude_code import hook_env, message_counts, stop_hosts

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

HOOK = Path(sys.executable).parent / "hybrid-memory"
SESSION = "5b0c3f7e-hook-test"


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def _hook(event: str, stdin: str, data_dir: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HOOK), "hook", event],
        input=stdin,
        env=hook_env(data_dir, **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _entry(uuid: str, role: str, text: str) -> str:
    return json.dumps(
        {
            "type": role,
            "uuid": uuid,
            "timestamp": "2026-11-20T10:00:00.000Z",
            "cwd": "/work/ledger",
            "sessionId": SESSION,
            "message": {"role": role, "content": text},
        }
    )


def _payload(transcript: Path, cwd: Path, event: str = "Stop", **extra: Any) -> str:
    return json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": str(transcript),
            "cwd": str(cwd),
            "hook_event_name": event,
            **extra,
        }
    )


def _thread_sizes(data_dir: Path, cwd: Path) -> dict[str, int]:
    return message_counts(data_dir, cwd)


@pytest.mark.parametrize(
    "event", ["session-start", "user-prompt-submit", "stop", "pre-compact", "session-end"]
)
@pytest.mark.parametrize("stdin", ["", "not json", "[1, 2]", '{"cwd": "/tmp"}'])
def test_a_malformed_payload_is_one_stderr_line_and_exit_0(event: str, stdin: str, tmp_path: Path) -> None:
    done = _hook(event, stdin, tmp_path / "data")
    assert done.returncode == 0
    assert done.stdout == ""
    assert len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"hybrid-memory hook {event}: ")


def test_a_missing_transcript_is_one_stderr_line_and_exit_0(tmp_path: Path) -> None:
    done = _hook("stop", _payload(tmp_path / "gone.jsonl", tmp_path), tmp_path / "data")
    assert done.returncode == 0
    assert done.stdout == ""
    gone = tmp_path / "gone.jsonl"
    assert done.stderr == f"hybrid-memory hook stop: the transcript {gone} does not exist; nothing captured\n"


def test_capture_of_a_truncated_then_completed_transcript_stores_each_message_once(
    tmp_path: Path, data_dir: Path
) -> None:
    cwd = tmp_path / "ledger"
    cwd.mkdir()
    transcript = tmp_path / f"{SESSION}.jsonl"
    lines = [
        _entry("u-1", "user", "We ship the ledger on Postgres 17."),
        _entry("a-1", "assistant", "Understood, Postgres 17."),
        _entry("u-2", "user", "And the queue is NATS."),
    ]
    whole = "\n".join(lines) + "\n"
    transcript.write_text(whole[:-15])  # the last line is still being written
    done = _hook("stop", _payload(transcript, cwd), data_dir, HYBRID_MEMORY_HOOK_DETACH="0")
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert _thread_sizes(data_dir, cwd) == {SESSION: 2}

    transcript.write_text(whole)
    for event in ("stop", "pre-compact", "session-end"):
        done = _hook(event, _payload(transcript, cwd), data_dir, HYBRID_MEMORY_HOOK_DETACH="0")
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert _thread_sizes(data_dir, cwd) == {SESSION: 3}

    transcript.write_text("\n".join(reversed(lines)) + "\n")  # rewritten: read again from the start
    done = _hook("session-end", _payload(transcript, cwd), data_dir, HYBRID_MEMORY_HOOK_DETACH="0")
    assert (done.returncode, done.stderr) == (0, "")
    assert _thread_sizes(data_dir, cwd) == {SESSION: 3}


def test_detached_capture_returns_at_once_and_a_starting_session_waits_for_it(
    tmp_path: Path, data_dir: Path
) -> None:
    cwd = tmp_path / "ledger"
    cwd.mkdir()
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text(_entry("u-1", "user", "The release train leaves every second Monday.") + "\n")
    done = _hook("stop", _payload(transcript, cwd), data_dir)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    start = _hook("session-start", json.dumps({"session_id": "next", "cwd": str(cwd)}), data_dir)
    assert start.returncode == 0, start.stderr
    context = json.loads(start.stdout)["hookSpecificOutput"]
    assert context["hookEventName"] == "SessionStart"
    assert "The release train leaves every second Monday." in context["additionalContext"]
    prompt = json.dumps(
        {"session_id": "next", "cwd": str(cwd), "prompt": "When does the release train leave?"}
    )
    asked = _hook("user-prompt-submit", prompt, data_dir)
    assert asked.returncode == 0, asked.stderr
    injected = json.loads(asked.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "[memory:" in injected
    assert "The release train leaves every second Monday." in injected
    elsewhere = json.dumps(
        {"session_id": "other", "cwd": str(tmp_path), "prompt": "When does the release train leave?"}
    )
    assert _hook("user-prompt-submit", elsewhere, data_dir).stdout == ""


def test_a_store_that_is_down_loses_nothing_and_duplicates_nothing(tmp_path: Path, data_dir: Path) -> None:
    cwd = tmp_path / "ledger"
    cwd.mkdir()
    transcript = tmp_path / f"{SESSION}.jsonl"
    transcript.write_text(_entry("u-1", "user", "The invoices are archived after 400 days.") + "\n")
    vectors = data_dir / "vectors"
    vectors.mkdir(parents=True)
    holder = os.open(vectors / "lock", os.O_RDWR | os.O_CREAT, 0o644)
    fcntl.flock(holder, fcntl.LOCK_EX)  # another process owns the store: no host can open it
    try:
        for event, payload in (
            ("stop", _payload(transcript, cwd)),
            ("user-prompt-submit", _payload(transcript, cwd, prompt="How long are the invoices kept?")),
        ):
            done = _hook(
                event, payload, data_dir, HYBRID_MEMORY_HOOK_DETACH="0", HYBRID_MEMORY_HOOK_TIMEOUT_S="20"
            )
            assert (done.returncode, done.stdout) == (0, "")
            assert len(done.stderr.splitlines()) == 1, done.stderr
            assert done.stderr.startswith(f"hybrid-memory hook {event}: ")
        stop_hosts(data_dir)
    finally:
        os.close(holder)
    done = _hook("stop", _payload(transcript, cwd), data_dir, HYBRID_MEMORY_HOOK_DETACH="0")
    assert (done.returncode, done.stderr) == (0, "")
    assert _thread_sizes(data_dir, cwd) == {SESSION: 1}
    config = HookConfig.from_env()._replace(data_dir=data_dir)
    assert settled(config, 10)


def test_import_transcript_remembers_old_sessions_once(tmp_path: Path, data_dir: Path) -> None:
    project_dir = tmp_path / "projects" / "-work-ledger"
    project_dir.mkdir(parents=True)
    (project_dir / "old-session.jsonl").write_text(
        "\n".join(
            [_entry("u-1", "user", "Ledger exports are CSV."), _entry("a-1", "assistant", "Noted: CSV.")]
        )
        + "\n"
    )
    command = [str(HOOK), "import-transcript", str(project_dir)]
    first = subprocess.run(
        command, env=hook_env(data_dir), capture_output=True, text=True, timeout=120, check=True
    )
    assert first.stdout == "imported 1 sessions: 2 messages stored, 0 already remembered\n"
    again = subprocess.run(
        command, env=hook_env(data_dir), capture_output=True, text=True, timeout=120, check=True
    )
    assert again.stdout == "imported 1 sessions: 0 messages stored, 0 already remembered\n"
    assert _thread_sizes(data_dir, Path("/work/ledger")) == {SESSION: 2}  # the thread its hooks would use
