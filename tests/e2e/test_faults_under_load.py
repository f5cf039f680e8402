"""Faults told, not thrown: sessions capture while the host is killed again and again and commands
join it, and a store whose graph file is damaged.

Real hook processes with Claude-Code-shaped payloads, a real host (SIGKILLed), real commands.
Waits are bounded; nothing is timed.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from hybrid_memory.host.lock import connect
from tests.e2e import test_capture_spool
from tests.e2e.claude_code import hook_env, host_pids, message_counts, stop_hosts
from tests.e2e.test_capture_spool import _hook_pids, _pending, _until

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

HOOK = Path(sys.executable).parent / "hybrid-memory"
SESSIONS = 6
TURNS = 8
TOPICS = ["invoices", "refunds", "ledger", "exports", "payouts", "audits", "taxes", "reports"]


data_dir = test_capture_spool.data_dir
"""The fixture: a data dir whose hooks and hosts are stopped after the test."""


def _run(
    args: list[str], data_dir: Path, stdin: str = "", timeout_s: str = "60"
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HOOK), *args],
        input=stdin,
        env=hook_env(data_dir, HYBRID_MEMORY_HOOK_TIMEOUT_S=timeout_s),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def _turn(session: int, turn: int, cwd: Path) -> list[dict[str, Any]]:
    """A user and an assistant entry, each saying something of its own (nothing is filler or a repeat)."""
    topic = TOPICS[turn % len(TOPICS)]
    said = [
        ("user", f"Session {session} turn {turn}: how are {topic} batched in region {session * 10 + turn}?"),
        ("assistant", f"In region {session * 10 + turn} the {topic} run in batches of {turn + 2} hundred."),
    ]
    return [
        {
            "type": role,
            "uuid": f"{session:08d}-0000-4000-8000-{turn * 2 + i:012d}",
            "timestamp": f"2026-11-20T1{session}:{turn:02d}:{i:02d}.000Z",
            "cwd": str(cwd),
            "sessionId": f"load-{session}",
            "message": {"role": role, "content": text},
        }
        for i, (role, text) in enumerate(said)
    ]


class _Killer(threading.Thread):
    """SIGKILLs the data dir's host 1.5 to 3 s after it is up (answers on its socket), again and again."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(daemon=True)
        self.data_dir = data_dir
        self.kills = 0
        self.stopped = threading.Event()

    def _up(self) -> list[int]:
        pids = host_pids(self.data_dir)
        sock = connect(self.data_dir) if pids else None
        if sock is None:
            return []
        sock.close()
        return pids

    def run(self) -> None:
        while not self.stopped.is_set():
            pids = self._up()
            if not pids:
                self.stopped.wait(0.1)
                continue
            if self.stopped.wait(random.uniform(1.5, 3.0)):
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
                    self.kills += 1


class _Joiner(threading.Thread):
    """Runs ``hybrid-memory stats`` every 1.5 s (a command joining whichever host runs)."""

    def __init__(self, data_dir: Path) -> None:
        super().__init__(daemon=True)
        self.data_dir = data_dir
        self.done: list[subprocess.CompletedProcess[str]] = []
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.wait(1.5):
            self.done.append(_run(["stats"], self.data_dir))


def test_sessions_captured_while_the_host_is_killed_and_commands_join_lose_nothing_and_err_clearly(
    tmp_path: Path, data_dir: Path
) -> None:
    cwd = tmp_path / "ledger"
    cwd.mkdir()
    killer, joiner = _Killer(data_dir), _Joiner(data_dir)
    hooks: list[subprocess.CompletedProcess[str]] = []
    transcripts = [tmp_path / f"load-{s}.jsonl" for s in range(SESSIONS)]
    killer.start()
    joiner.start()
    try:
        turn = 0
        # At least TURNS turns, and on until the host has been killed three times (a fast machine
        # finishes TURNS turns before that), within a bound.
        while turn < TURNS or (killer.kills < 3 and turn < 6 * TURNS):
            for session, transcript in enumerate(transcripts):
                with transcript.open("a") as f:
                    f.writelines(json.dumps(entry) + "\n" for entry in _turn(session, turn, cwd))
                payload = {
                    "session_id": f"load-{session}",
                    "transcript_path": str(transcript),
                    "cwd": str(cwd),
                }
                hooks.append(_run(["hook", "stop"], data_dir, json.dumps(payload)))
            topic = TOPICS[turn % len(TOPICS)]
            prompt = {"session_id": "load-0", "cwd": str(cwd), "prompt": f"How are {topic} batched?"}
            # A prompt waits for a host no longer than a session would bear; it may find none answering.
            hooks.append(_run(["hook", "user-prompt-submit"], data_dir, json.dumps(prompt), timeout_s="10"))
            turn += 1
    finally:
        killer.stopped.set()
        joiner.stopped.set()
        killer.join()
        joiner.join()
    commands = joiner.done

    _until(lambda: not _pending(data_dir) and not _hook_pids(data_dir), 600, "every capture done")
    assert killer.kills >= 3
    assert message_counts(data_dir, cwd) == {f"load-{s}": 2 * turn for s in range(SESSIONS)}
    assert not _pending(data_dir)
    told = [p.stderr for p in hooks + commands] + [_log(data_dir)]
    assert not [t for t in told if "unexpected error" in t]
    assert all(p.returncode == 0 for p in hooks)
    assert all(
        p.stderr.count("\n") <= 1 for p in hooks
    )  # a hook that could not do its work says so in a line
    assert all(p.returncode == 0 or p.stderr.startswith("hybrid-memory: ") for p in commands)


def _log(data_dir: Path) -> str:
    log = data_dir / "hooks" / "hooks.log"
    return log.read_text() if log.is_file() else ""


def test_a_damaged_graph_file_is_named_left_as_it_is_and_a_new_session_is_told(
    tmp_path: Path, data_dir: Path
) -> None:
    created = _run(["stats"], data_dir)
    assert created.returncode == 0, created.stderr
    stop_hosts(data_dir)
    graph = data_dir / "graph.sqlite3"
    graph.write_bytes(b"not a database, damaged " * 40 + graph.read_bytes()[1000:])
    before = hashlib.sha256(graph.read_bytes()).hexdigest()

    stats = _run(["stats"], data_dir)
    assert stats.returncode != 0
    assert (
        stats.stderr.splitlines()[-1]
        == f"hybrid-memory: The graph store at {graph} failed: file is not a database"
    )

    payload = {"session_id": "after-damage", "cwd": str(tmp_path), "source": "startup"}
    started = _run(["hook", "session-start"], data_dir, json.dumps(payload))
    assert started.returncode == 0
    told = json.loads(started.stdout)["systemMessage"]
    assert str(graph) in told
    assert "move it aside" in told
    assert "unexpected" not in told + started.stderr
    assert hashlib.sha256(graph.read_bytes()).hexdigest() == before
