"""The data dir is its owner's alone: a real server, a hook capture and an export leave nothing to others."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client

from hybrid_memory.integrations.config import HookConfig
from hybrid_memory.integrations.pending import settled
from hybrid_memory.private import make_private
from tests.e2e.claude_code import hook_env, stop_hosts
from tests.e2e.test_transports import stdio_params
from tests.tools.helpers import call

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

HOOK = Path(sys.executable).parent / "hybrid-memory"
SESSION = "3e9d0c55-private"


@pytest.fixture
def umask(request: pytest.FixtureRequest) -> Iterator[int]:
    """The test process's umask (its children inherit it), restored afterwards."""
    old = os.umask(request.param)
    yield request.param
    os.umask(old)


def readable_by_others(root: Path) -> dict[str, str]:
    """Every path under ``root`` (itself included) that group or others can use, with its mode."""
    found = {}
    for path in [root, *root.rglob("*")]:
        mode = stat.S_IMODE(path.lstat().st_mode)
        if mode & 0o077 and not path.is_symlink():
            found[str(path.relative_to(root.parent))] = oct(mode)
    return found


async def remember_over_stdio(data_dir: Path) -> None:
    """One session of the real server over stdio, on its real stores."""
    async with Client(stdio_params(data_dir)) as client:
        message = {"role": "user", "content": "The vault is 0700."}
        stored = await call(client, "remember_thread", thread_id="t", messages=[message])
    assert stored["stored"] == 1


@pytest.mark.parametrize("umask", [0o022, 0o000], indirect=True, ids=["umask-022", "umask-000"])
def test_serve_capture_and_export_leave_nothing_readable_by_others(umask: int, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    try:
        anyio.run(remember_over_stdio, data_dir)

        cwd = tmp_path / "proj"
        cwd.mkdir()
        transcript = tmp_path / f"{SESSION}.jsonl"
        entry = {
            "type": "user",
            "uuid": "u-1",
            "sessionId": SESSION,
            "cwd": str(cwd),
            "message": {"role": "user", "content": "Captured sessions hold what people paste."},
        }
        transcript.write_text(json.dumps(entry) + "\n")
        payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(cwd)}
        done = subprocess.run(
            [str(HOOK), "hook", "stop"],
            input=json.dumps({**payload, "hook_event_name": "Stop"}),
            env=hook_env(data_dir),  # detached, as Claude Code runs it: the capture writes hooks.log
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert (done.returncode, done.stderr) == (0, "")
        assert settled(HookConfig.from_env()._replace(data_dir=data_dir), 120)
        exported = subprocess.run(
            [str(HOOK), "export", str(data_dir / "export.jsonl")],
            env=hook_env(data_dir),
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
        )
        assert exported.returncode == 0, exported.stderr
        assert (data_dir / "serve.sock").exists()  # the host still runs: its socket is checked too
        assert readable_by_others(data_dir) == {}
    finally:
        stop_hosts(data_dir)
    names = {p.name for p in data_dir.rglob("*")}
    assert {"graph.sqlite3", "vectors", "hooks", "hooks.log", "host.log", "export.jsonl"} <= names
    assert readable_by_others(data_dir) == {}


@pytest.mark.parametrize("umask", [0o022], indirect=True)
def test_an_existing_data_dir_is_tightened_when_it_is_opened(umask: int, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    (data_dir / "vectors" / "segments").mkdir(parents=True)
    (data_dir / "graph.sqlite3").write_text("x")
    (data_dir / "vectors" / "segments" / "wal").write_text("x")
    (data_dir / "hooks").mkdir(mode=0o777)
    os.chmod(data_dir / "hooks", 0o777)
    (data_dir / "hooks" / "hooks.log").write_text("x")
    os.chmod(data_dir / "hooks" / "hooks.log", 0o666)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(data_dir / "host.sock"))
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not ours to change")
    (data_dir / "link").symlink_to(outside)
    try:
        assert len(readable_by_others(data_dir)) == 8
        make_private(data_dir)
        assert readable_by_others(data_dir) == {}
    finally:
        listener.close()
    assert stat.S_IMODE(outside.stat().st_mode) == 0o644
    assert stat.S_IMODE((data_dir / "hooks").stat().st_mode) == 0o700
    assert stat.S_IMODE((data_dir / "graph.sqlite3").stat().st_mode) == 0o600
