"""A project is a repository, through the plugin's hooks and the CLI, each a real process against a real host.

``alice/api`` is a git repository with a worktree and a ``src/`` folder; ``bob/api`` is another
repository whose folder has the same name; ``carol/api`` is a folder outside git. A fact told in a
session in ``alice/api`` reaches every directory of that repository and none of the others; and once
``src/db.py``, which that session edited, changes in a commit, what the model reads says so.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.e2e.claude_code import hook_env
from tests.e2e.test_hooks import HOOK, data_dir  # noqa: F401 (the fixture: stops the hosts it started)
from tests.unit.test_projects import git, repo

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

SESSION = "9d4e2a61-alice-session"
FACT = "The database pool size is 20 in production; it is set in src/db.py."
QUESTION = "What is the database pool size in production?"


def _run(args: list[str], data: Path, cwd: Path, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HOOK), *args],
        input=stdin,
        cwd=cwd,
        env=hook_env(data, HYBRID_MEMORY_HOOK_DETACH="0"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _transcript(path: Path, cwd: Path) -> Path:
    """A session in ``cwd``: the user tells the fact, the assistant edits ``src/db.py`` and confirms."""

    def line(uuid: str, role: str, content: object) -> str:
        entry = {
            "type": role,
            "uuid": uuid,
            "timestamp": "2026-11-20T10:00:00.000Z",
            "cwd": str(cwd),
            "sessionId": SESSION,
            "message": {"role": role, "content": content},
        }
        return json.dumps(entry)

    edit = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": "Edit",
        "input": {"file_path": str(cwd / "src" / "db.py"), "old_string": "10", "new_string": "20"},
    }
    lines = [
        line("u-1", "user", FACT),
        line("a-1", "assistant", [{"type": "text", "text": "Setting the pool to 20 in src/db.py."}, edit]),
        line("u-2", "user", [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok"}]),
        line("a-2", "assistant", [{"type": "text", "text": "Done: the database pool size is now 20."}]),
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def _injected(data: Path, cwd: Path, prompt: str = QUESTION) -> str:
    payload = json.dumps({"session_id": f"asks-{cwd.name}", "cwd": str(cwd), "prompt": prompt})
    done = _run(["hook", "user-prompt-submit"], data, cwd, payload)
    assert done.returncode == 0, done.stderr
    if not done.stdout:
        return ""
    return str(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"])


def _session_start(data: Path, cwd: Path) -> str:
    payload = json.dumps({"session_id": f"starts-{cwd.name}", "cwd": str(cwd)})
    done = _run(["hook", "session-start"], data, cwd, payload)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_fact_told_in_a_repository_reaches_its_worktree_and_folders_and_no_namesake(
    tmp_path: Path,
    data_dir: Path,  # noqa: F811
) -> None:
    alice = repo(tmp_path / "alice" / "api")
    worktree = tmp_path / "alice" / "api-review"
    git(alice, "worktree", "add", "-q", "-b", "review", str(worktree))
    bob = repo(tmp_path / "bob" / "api")
    carol = tmp_path / "carol" / "api"
    carol.mkdir(parents=True)
    (alice / "src" / "db.py").write_text("POOL = 20\n")  # what the session's edit left

    stop = json.dumps(
        {
            "session_id": SESSION,
            "transcript_path": str(_transcript(tmp_path / f"{SESSION}.jsonl", alice)),
            "cwd": str(alice),
            "hook_event_name": "Stop",
        }
    )
    captured = _run(["hook", "stop"], data_dir, alice, stop)
    assert (captured.returncode, captured.stdout, captured.stderr) == (0, "", "")

    for place in (alice, worktree, alice / "src"):
        assert FACT in _injected(data_dir, place), place
        assert "pool size is 20" in _session_start(data_dir, place), place
    for place in (bob, carol):
        assert _injected(data_dir, place) == "", place
        assert "pool" not in _session_start(data_dir, place), place

    here = _run(["recall", "database pool size"], data_dir, alice)
    assert here.returncode == 0, here.stderr
    assert FACT in here.stdout
    there = _run(["recall", "database pool size"], data_dir, bob)
    assert there.returncode == 0, there.stderr
    assert "pool" not in there.stdout
    assert "changed since" not in here.stdout + _injected(data_dir, alice)

    (alice / "src" / "db.py").write_text("POOL = 35\n")
    git(alice, "commit", "-q", "-am", "pool 35")

    injected = _injected(data_dir, alice)
    assert FACT in injected
    assert f"{FACT} (src/db.py changed since)" in injected
    recalled = _run(["recall", "database pool size"], data_dir, alice / "src")
    assert f"{FACT} (src/db.py changed since)" in recalled.stdout


def _forget_project_of(cwd: Path, data: Path) -> None:
    from hybrid_memory.projects import project_of_directory

    forgot = _run(["forget", "--project", project_of_directory(cwd)], data, cwd.parent)
    assert forgot.returncode == 0, forgot.stderr


def test_a_project_forgotten_leaves_no_capture_state_behind(
    tmp_path: Path,
    data_dir: Path,  # noqa: F811
) -> None:
    alice, bob = repo(tmp_path / "alice" / "api"), repo(tmp_path / "bob" / "api")
    for cwd in (alice, bob):
        stop = {
            "session_id": f"{SESSION}-{cwd.parent.name}",
            "transcript_path": str(_transcript(tmp_path / f"{cwd.parent.name}.jsonl", cwd)),
            "cwd": str(cwd),
        }
        captured = _run(["hook", "stop"], data_dir, cwd, json.dumps(stop))
        assert (captured.returncode, captured.stderr) == (0, "")
    assert FACT in _injected(data_dir, alice)

    _forget_project_of(alice, data_dir)

    assert _injected(data_dir, alice) == ""
    assert FACT in _injected(data_dir, bob)
    # The hooks keep nothing of a session or a project beside the store: what is left under hooks/ is
    # the injections' log and empty lock files, and no file there names the forgotten session.
    hooks = data_dir / "hooks"
    left = sorted(p.name for p in hooks.rglob("*") if p.is_file() and p.suffix != ".lock")
    assert left == ["injections.jsonl"]
    assert all(p.stat().st_size == 0 for p in hooks.rglob("*.lock"))
    assert f"{SESSION}-alice" not in (hooks / "injections.jsonl").read_text()


def _opencode_stop(session: str, cwd: Path) -> str:
    """opencode's plugin at the end of a turn: the session's messages as opencode's API gives them."""

    def message(i: int, role: str, text: str) -> dict[str, object]:
        info = {
            "id": f"msg_{session}_{i}",
            "sessionID": session,
            "role": role,
            "time": {"created": 1_763_632_800_000 + i, "completed": 1_763_632_800_500 + i},
            "path": {"cwd": str(cwd), "root": str(cwd)},
        }
        return {"info": info, "parts": [{"type": "text", "text": text}]}

    said = [message(0, "user", FACT), message(1, "assistant", "Noted: the pool size is 20 in production.")]
    return json.dumps({"session_id": session, "cwd": str(cwd), "messages": said})


def test_a_project_forgotten_leaves_no_opencode_transcript_behind(tmp_path: Path, data_dir: Path) -> None:  # noqa: F811
    alice, bob = repo(tmp_path / "alice" / "api"), repo(tmp_path / "bob" / "api")
    for cwd in (alice, bob):
        stop = _opencode_stop(f"ses_{cwd.parent.name}", cwd)
        assert _run(["hook", "opencode", "stop"], data_dir, cwd, stop).stderr == ""
    kept = data_dir / "hooks" / "opencode"
    assert sorted(p.name for p in kept.iterdir()) == ["ses_alice.jsonl", "ses_bob.jsonl"]
    assert FACT in _injected(data_dir, alice)

    _forget_project_of(alice, data_dir)

    assert _injected(data_dir, alice) == ""
    assert sorted(p.name for p in kept.iterdir()) == ["ses_bob.jsonl"]  # bob's project keeps its own
    assert FACT in _injected(data_dir, bob)
