"""A project is a repository: one rule for a directory, read from ``.git`` without running git."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from hybrid_memory.integrations.config import HookConfig, project_of
from hybrid_memory.projects import (
    label,
    labels,
    legacy_project_name,
    project_name,
    project_of_directory,
    repository,
    root_uri,
)

GIT_ENV = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.org",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.org",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def repo(path: Path) -> Path:
    """A git repository with one commit (a worktree needs one) and a ``src/`` folder."""
    (path / "src").mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    (path / "src" / "db.py").write_text("POOL = 10\n")
    git(path, "add", ".")
    git(path, "commit", "-q", "-m", "first")
    return path


def test_a_repository_its_subdirectory_and_its_worktree_are_one_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = repo(tmp_path / "alice" / "api")
    git(api, "worktree", "add", "-q", "-b", "feature", str(tmp_path / "alice" / "api-feature"))
    (tmp_path / "alice" / "api-feature" / "src" / "deep").mkdir()
    monkeypatch.setenv("PATH", "")  # no git to run: the rule reads .git itself

    names = {
        project_of_directory(api),
        project_of_directory(api / "src"),
        project_of_directory(tmp_path / "alice" / "api-feature"),
        project_of_directory(tmp_path / "alice" / "api-feature" / "src" / "deep"),
    }

    assert names == {str(api)}
    worktree = repository(tmp_path / "alice" / "api-feature" / "src")
    assert worktree is not None
    assert worktree.work_tree == tmp_path / "alice" / "api-feature"


def test_repositories_named_alike_stay_apart_and_people_read_them_apart(tmp_path: Path) -> None:
    alice, bob = repo(tmp_path / "alice" / "api"), repo(tmp_path / "bob" / "api")
    carol = tmp_path / "carol" / "api"
    carol.mkdir(parents=True)

    projects = [project_of_directory(p) for p in (alice, bob, carol)]

    assert projects == [str(alice), str(bob), str(carol)]
    assert labels(projects) == {str(alice): "alice/api", str(bob): "bob/api", str(carol): "carol/api"}
    assert labels([str(alice), "notes-only"]) == {str(alice): "api", "notes-only": "notes-only"}


def test_a_root_names_the_project_of_its_directory_and_the_old_name_stays_readable(tmp_path: Path) -> None:
    api = repo(tmp_path / "alice" / "api")
    uri = root_uri(api / "src")

    assert project_name(uri) == str(api)
    assert project_name(uri, "a name the client gave") == str(api)
    assert legacy_project_name(uri) == "src"
    assert project_name("https://example.org/a/notes", None) == "notes"


def test_windows_paths_in_transcripts_name_their_folder_not_the_whole_path() -> None:
    for cwd, project, folder in (
        (r"S:\01_Repos\BeFirst_Docs", "/s/01_Repos/BeFirst_Docs", "BeFirst_Docs"),
        ("C:\\Users\\ana\\app", "/c/Users/ana/app", "app"),
    ):
        assert project_name(root_uri(cwd)) == project
        assert project_name("file:///" + cwd.replace("\\", "/")) == project  # a Windows client's root
        assert label(project) == folder
        assert label(cwd) == folder
    assert labels(["/s/01_Repos/app", "/c/Users/ana/app"]) == {
        "/s/01_Repos/app": "01_Repos/app",
        "/c/Users/ana/app": "ana/app",
    }


def test_the_hooks_name_the_session_like_the_server_and_the_environment_overrides(tmp_path: Path) -> None:
    api = repo(tmp_path / "alice" / "api")
    config = HookConfig.from_env()._replace(data_dir=tmp_path / "data", project=None)

    assert project_of(config, api / "src") == str(api)
    assert project_of(config._replace(project="chosen"), api) == "chosen"


def test_a_home_directory_kept_in_git_does_not_make_every_folder_one_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = repo(tmp_path / "home")
    (home / "notes").mkdir()
    api = repo(home / "work" / "api")
    monkeypatch.setenv("HOME", str(home))

    assert project_of_directory(home / "notes") == str(home / "notes")
    assert project_of_directory(api / "src") == str(api)


def test_a_windows_sessions_transcript_names_its_folder(tmp_path: Path) -> None:
    from hybrid_memory.integrations.transcript import read_from
    from tests.unit.test_transcript_shapes import FIXTURES

    windows = FIXTURES / "claude-code" / "e4a1b2c3-9d8e-4f70-8a6b-5c4d3e2f1a00.jsonl"
    cwd = read_from(windows, 0).cwd
    assert cwd is not None
    config = HookConfig.from_env()._replace(data_dir=tmp_path / "data", project=None)

    project = project_of(config, Path(cwd))

    assert project == "/c/Users/ada/work/Billing"
    assert label(project) == "Billing"
    assert label(project_name(root_uri(r"C:\Users\ada\work\Billing")) or "") == "Billing"
