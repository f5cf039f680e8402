"""What the code looked like when a memory was made, read as git reads it, without running git."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybrid_memory import codestate
from hybrid_memory.integrations.capture import with_code
from hybrid_memory.integrations.transcript import Message
from tests.unit.test_projects import git, repo


def test_a_files_blob_id_is_the_one_git_gives_it(tmp_path: Path) -> None:
    api = repo(tmp_path / "api")
    (api / "src" / "db.py").write_text("POOL = 20  # é\n")

    assert codestate.blob_id(api / "src" / "db.py") == git(api, "hash-object", "src/db.py")
    assert codestate.blob_id(api / "missing.py") is None


@pytest.mark.parametrize("packed", [False, True])
def test_a_snapshot_names_the_commit_and_branch_checked_out(tmp_path: Path, packed: bool) -> None:
    api = repo(tmp_path / "api")
    git(api, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "api-feature"))
    if packed:
        git(api, "pack-refs", "--all")
    feature = tmp_path / "api-feature"

    given = [str(feature / "src" / "db.py"), "../README.md", "/etc/hosts"]
    state = codestate.snapshot(feature / "src", given)

    assert state == {
        "files": {"src/db.py": git(feature, "hash-object", "src/db.py"), "README.md": None},
        "commit": git(feature, "rev-parse", "HEAD"),
        "branch": "feature",
    }
    assert codestate.snapshot(tmp_path, ["x.py"]) is None  # outside git


def test_a_work_tree_says_which_kept_files_changed_and_on_which_branch_they_were(tmp_path: Path) -> None:
    api = repo(tmp_path / "api")
    kept = codestate.snapshot(api, ["src/db.py"])
    assert kept is not None
    (api / "src" / "db.py").write_text("POOL = 30\n")
    git(api, "commit", "-q", "-am", "pool 30")

    tree = codestate.WorkTree(api / "src")

    assert tree.changed(kept["files"]) == ["src/db.py"]
    assert tree.changed({"src/db.py": codestate.blob_id(api / "src" / "db.py")}) == []
    assert tree.other_branch("main") is None
    assert tree.other_branch("feature") == "feature"
    assert codestate.WorkTree(None).changed(kept["files"]) == []
    assert codestate.note(["src/db.py"], "feature") == "(src/db.py changed since; made on branch feature)"
    assert codestate.note([], None) == ""


def test_capture_gives_every_message_of_a_turn_the_files_the_turn_edited(tmp_path: Path) -> None:
    api = repo(tmp_path / "api")
    messages = [
        Message("u1", "user", "set the pool to 20", None),
        Message("a1", "assistant", "(edited src/db.py)", None, [str(api / "src" / "db.py")]),
        Message("a2", "assistant", "Done: the pool is 20.", None),
        Message("u2", "user", "thanks, what else?", None),
        Message("a3", "assistant", "Nothing else.", None),
    ]

    with_code(messages, api)

    expected = {
        "files": {"src/db.py": git(api, "hash-object", "src/db.py")},
        "commit": git(api, "rev-parse", "HEAD"),
        "branch": "main",
    }
    assert [m.code for m in messages] == [expected, expected, expected, None, None]
    assert messages[2].as_argument()["code"] == expected
    assert "code" not in messages[3].as_argument()
