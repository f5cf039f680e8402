"""No capture is ever dropped: captures that cannot be done now wait on disk and are done later.

Real hook processes (``hybrid-memory hook <event>``) with Claude-Code-shaped payloads and
transcripts, a real host, and a helper that holds the store the way a command does.
Waits are bounded; nothing is timed.
"""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.claude_code import hook_env, host_pids, stop_hosts
from tests.e2e.test_hooks import _thread_sizes

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

HOOK = Path(sys.executable).parent / "hybrid-memory"
HOLD_LIKE_A_COMMAND = """
import sys, time
from pathlib import Path
from hybrid_memory.host import lock as hostlock
fd = hostlock.try_lock(Path(sys.argv[1]), hostlock.COMMAND, "export")
assert fd is not None, "the store is held already"
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def _hook_pids(data_dir: Path) -> list[int]:
    """The hook processes (detached captures and retries) working on ``data_dir``."""
    wanted = b"HYBRID_MEMORY_DATA_DIR=" + os.fsencode(data_dir)
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
            environ = (proc / "environ").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"hook" in argv and wanted in environ and int(proc.name) != os.getpid():
            pids.append(int(proc.name))
    return pids


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    for pid in _hook_pids(path):  # a capture still waiting when the test failed
        os.kill(pid, signal.SIGKILL)
    stop_hosts(path)


def _hook(
    event: str, payload: dict[str, Any], data_dir: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HOOK), "hook", event],
        input=json.dumps(payload),
        env=hook_env(data_dir, HYBRID_MEMORY_HOOK_TIMEOUT_S="20", **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _session(tmp_path: Path, session_id: str, facts: list[str]) -> dict[str, Any]:
    """A Claude Code transcript of ``facts`` (user, assistant, ...) and its SessionEnd payload."""
    cwd = tmp_path / "ledger"
    cwd.mkdir(exist_ok=True)
    transcript = tmp_path / f"{session_id}.jsonl"
    lines = [
        json.dumps(
            {
                "parentUuid": None,
                "isSidechain": False,
                "type": "user" if i % 2 == 0 else "assistant",
                "uuid": f"{session_id[:8]}-0000-4000-8000-{i:012d}",
                "timestamp": f"2026-11-20T10:00:{i:02d}.000Z",
                "cwd": str(cwd),
                "sessionId": session_id,
                "version": "2.1.29",
                "message": {"role": "user" if i % 2 == 0 else "assistant", "content": fact},
            }
        )
        for i, fact in enumerate(facts)
    ]
    transcript.write_text("\n".join(lines) + "\n")
    return {
        "session_id": session_id,
        "transcript_path": str(transcript),
        "cwd": str(cwd),
        "hook_event_name": "SessionEnd",
        "reason": "exit",
    }


def _pending(data_dir: Path) -> list[dict[str, Any]]:
    folder = data_dir / "hooks" / "pending"
    return [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))] if folder.is_dir() else []


def _until(condition: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not within {timeout_s:g} s")
        time.sleep(0.2)


SESSIONS = {
    "a1e0c7d2-1111-4b6e-9f00-000000000001": [
        "Invoices are archived after 400 days.",
        "Noted: 400 days.",
    ],
    "b2f1d8e3-2222-4c7f-8a11-000000000002": [
        "The payment provider is Adyen.",
        "Adyen it is.",
        "Refunds go through the same provider.",
    ],
    "c3a2e9f4-3333-4d80-9b22-000000000003": ["Ledger exports run at 06:00 UTC."],
}


def test_sessions_that_end_while_a_command_holds_the_store_are_all_captured_afterwards(
    tmp_path: Path, data_dir: Path
) -> None:
    data_dir.mkdir(parents=True)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LIKE_A_COMMAND, str(data_dir), "25"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        for session_id, facts in SESSIONS.items():
            done = _hook("session-end", _session(tmp_path, session_id, facts), data_dir)
            assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
        # Written before any capture was tried, and kept: the store is not to be had for now
        # (checked while the command still holds it; a very slow machine may have got past it).
        waiting = sorted(p["session_id"] for p in _pending(data_dir))
        if holder.poll() is None:
            assert waiting == sorted(SESSIONS)
        assert holder.wait(timeout=120) == 0
    finally:
        holder.kill()
        holder.wait()
        if holder.stdout is not None:
            holder.stdout.close()
    _until(lambda: not _pending(data_dir), 300, "the three waiting captures done")
    assert _thread_sizes(data_dir, tmp_path / "ledger") == {s: len(facts) for s, facts in SESSIONS.items()}


def test_a_failing_capture_waits_is_told_at_the_next_start_and_is_done_by_the_next_hook(
    tmp_path: Path, data_dir: Path
) -> None:
    session_id, facts = next(iter(SESSIONS.items()))
    payload = _session(tmp_path, session_id, facts)
    vectors = data_dir / "vectors"
    vectors.mkdir(parents=True)
    lock = os.open(vectors / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)  # another program owns the store: no host can open it
    try:
        done = _hook("session-end", payload, data_dir, HYBRID_MEMORY_HOOK_DETACH="0")
        assert (done.returncode, done.stdout) == (0, "")
        assert done.stderr.startswith("hybrid-memory hook session-end: ")
        [waiting] = _pending(data_dir)
        assert (waiting["session_id"], waiting["attempts"]) == (session_id, 1)
        error = waiting["last_error"]
        assert error

        start = _hook("session-start", {"session_id": "next-1", "cwd": str(tmp_path)}, data_dir)
        assert start.returncode == 0
        # Told why this session has no memory, then what waits.
        unavailable, told = json.loads(start.stdout)["systemMessage"].splitlines()
        assert unavailable.startswith("hybrid-memory: no memory in this session: The memory store at ")
        assert told == (
            "hybrid-memory: 1 session waits to be captured (retried by the next hook and when the memory "
            f"host starts; see {data_dir / 'hooks' / 'hooks.log'}); last error: {error}"
        )
        stop_hosts(data_dir)
    finally:
        os.close(lock)

    stats = subprocess.run(
        [str(HOOK), "stats"], env=hook_env(data_dir), capture_output=True, text=True, timeout=120, check=True
    )
    assert told in stats.stderr.splitlines()
    assert json.loads(stats.stdout)["items"] == 0

    # Time passes: the failed capture is due for a retry (the file is the whole state).
    [path] = (data_dir / "hooks" / "pending").glob("*.json")
    path.write_text(json.dumps({**waiting, "last_attempt": waiting["last_attempt"] - 3600}))
    prompt = {"session_id": "next-2", "cwd": str(tmp_path), "prompt": "How long are invoices archived?"}
    asked = _hook("user-prompt-submit", prompt, data_dir)
    assert asked.returncode == 0, asked.stderr
    _until(lambda: not _pending(data_dir), 120, "the waiting capture done by another session's hook")
    assert _thread_sizes(data_dir, tmp_path / "ledger") == {session_id: len(facts)}


def test_captures_left_waiting_are_done_by_the_next_host_that_starts(tmp_path: Path, data_dir: Path) -> None:
    sessions = list(SESSIONS.items())[:2]
    vectors = data_dir / "vectors"
    vectors.mkdir(parents=True)
    lock = os.open(vectors / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(lock, fcntl.LOCK_EX)  # no host can open the store
    try:
        for session_id, facts in sessions:
            done = _hook(
                "stop", _session(tmp_path, session_id, facts), data_dir, HYBRID_MEMORY_HOOK_DETACH="0"
            )
            assert done.stderr.startswith("hybrid-memory hook stop: ")
        assert [p["attempts"] for p in _pending(data_dir)] == [1, 1]
        stop_hosts(data_dir)
    finally:
        os.close(lock)
    # No hook runs again: a host started for any reason (here by hand) does what waits.
    host = subprocess.Popen(
        [str(HOOK), "serve", "--headless", "--data-dir", str(data_dir)],
        env=hook_env(data_dir),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        _until(lambda: not _pending(data_dir), 180, "the waiting captures done by the host at its start")
        assert _thread_sizes(data_dir, tmp_path / "ledger") == {s: len(facts) for s, facts in sessions}
    finally:
        stop_hosts(data_dir)
        host.wait(timeout=60)


def _captured_messages(data_dir: Path, tmp_path: Path, session_id: str) -> list[str]:
    """The message ids the store holds for ``session_id``, one per memory (as an export lists them)."""
    out = tmp_path / "export.jsonl"
    subprocess.run(
        [str(HOOK), "export", "--all-projects", "--quiet", str(out)],
        env=hook_env(data_dir),
        capture_output=True,
        timeout=300,
        check=True,
    )
    items = [json.loads(line) for line in out.read_text().splitlines()[1:]]
    return [
        i["message_id"]
        for i in items
        if i["item"] == "memory" and i["kind"] == "message" and i["thread_id"] == session_id
    ]


def _stored_so_far(data_dir: Path, cwd: Path) -> int:
    from hybrid_memory.host.client import connect

    with connect(data_dir, cwd, timeout_s=60, start=False) as host:
        return sum(t["memories"] for t in host.call_tool("list_threads", {})["threads"])


def test_a_capture_whose_host_is_killed_mid_way_is_finished_by_the_next_with_nothing_stored_twice(
    tmp_path: Path, data_dir: Path
) -> None:
    session_id = "d4b3f0a5-4444-4e91-8c33-000000000004"
    facts = [f"Fact {i}: batch {i} of the ledger closes at {i % 24:02d}:00 in zone {i}." for i in range(900)]
    payload = _session(tmp_path, session_id, facts)
    cwd = Path(payload["cwd"])
    started = _hook("stop", payload, data_dir)  # detached: it returns at once, the capture goes on
    assert (started.returncode, started.stderr) == (0, "")
    _until(lambda: bool(host_pids(data_dir)), 120, "a host started by the capture")
    _until(lambda: _stored_so_far(data_dir, cwd) > 0, 300, "part of the session stored")
    partly = _stored_so_far(data_dir, cwd)
    killed = host_pids(data_dir)
    for pid in killed:
        os.kill(pid, signal.SIGKILL)
    assert partly < len(facts)  # killed mid-way
    # The capture's request finds its host gone and asks once more: the next host finishes it.
    _until(lambda: not _pending(data_dir) and not _hook_pids(data_dir), 600, "the capture finished")
    assert set(host_pids(data_dir)).isdisjoint(killed)
    stop_hosts(data_dir)
    stored = _captured_messages(data_dir, tmp_path, session_id)
    assert len(stored) == len(facts)
    assert len(set(stored)) == len(facts)  # nothing stored twice
