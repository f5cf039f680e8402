"""The command call's wire format, the host lock's holder record, and the arguments a command sends."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from hybrid_memory.cli import _parser
from hybrid_memory.commands import arguments
from hybrid_memory.host import join, lock, wire
from tests.e2e.servers import INITIALIZE


def test_a_command_call_is_told_apart_from_an_mcp_clients_first_message() -> None:
    call = wire.request("stats", {"project": "p", "user": "default"}, {}, tty=False)

    assert wire.method_of(call) == wire.METHOD
    assert wire.method_of(json.dumps(INITIALIZE).encode() + b"\n") == "initialize"
    assert wire.method_of(b'{"method": "hybrid-memory/command", truncated\n') is None
    assert wire.method_of(json.dumps({**INITIALIZE, "params": {"x": wire.METHOD}}).encode()) == "initialize"
    assert json.loads(call)["params"] == {
        "command": "stats",
        "scope": {"project": "p", "user": "default"},
        "args": {},
        "tty": False,
    }


def test_the_lock_records_a_command_holder_so_a_server_waits_for_it(tmp_path: Path) -> None:
    fd = lock.try_lock(tmp_path, lock.COMMAND, "import")
    assert fd is not None
    try:
        assert lock.try_lock(tmp_path, lock.SERVER) is None  # held: another open file cannot take it
        assert lock.command_holding(tmp_path) == f"hybrid-memory import (pid {os.getpid()})"
    finally:
        os.close(fd)
    fd = lock.try_lock(tmp_path, lock.SERVER)
    assert fd is not None
    os.close(fd)
    assert lock.command_holding(tmp_path) is None  # a server's record: no waiting without bound


def test_a_data_dir_with_no_server_has_nothing_to_join_and_its_lock_is_taken(tmp_path: Path) -> None:
    assert lock.connect(tmp_path) is None
    assert lock.connect(tmp_path / "missing") is None
    held = join.join_or_hold(tmp_path / "new", "stats")
    assert isinstance(held, int)
    join.release(held)


def test_paths_are_sent_absolute_because_the_server_has_its_own_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    export = arguments(_parser().parse_args(["export", "out.jsonl", "--project", "a", "--all-projects"]))
    graph = arguments(_parser().parse_args(["graph", "--html", "g.html"]))
    recall = arguments(_parser().parse_args(["recall", "a query", "--limit", "7", "--json"]))

    assert export == {
        "file": str(tmp_path / "out.jsonl"),
        "projects": ["a"],
        "all_projects": True,
        "with_embeddings": False,
        "quiet": False,
    }
    assert graph == {"html": str(tmp_path / "g.html")}
    # The directory goes too: recall compares the files a memory's turn edited with it.
    assert recall == {"query": "a query", "limit": 7, "json": True, "cwd": str(tmp_path), "legacy": None}


@pytest.mark.parametrize("xdg", ["", "/srv/xdg-data"])
def test_the_default_data_dir_is_platformdirs_one(monkeypatch: pytest.MonkeyPatch, xdg: str) -> None:
    import platformdirs

    from hybrid_memory.host.lock import default_data_dir

    monkeypatch.setenv("XDG_DATA_HOME", xdg)
    assert default_data_dir() == Path(platformdirs.user_data_dir("mcp-hybrid-memory", appauthor=False))
