"""What the code looked like when a memory was made, and which of its files changed since.

Capture keeps, for the files a session's turn edited, each file's git blob id (the hash git
gives its content), the commit checked out and the branch. Recall compares those blob ids
with the files as they are now in the caller's work tree. Both sides read files and ``.git``
themselves: no ``git`` process, so it costs a hook or a recall a few file reads.

Stdlib only: the Stop hook imports it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from hybrid_memory.projects import Repository, repository

MAX_FILE_BYTES = 4 << 20
"""A larger file is not hashed (its blob id stays unknown, so it never reads as changed)."""


def blob_id(path: Path) -> str | None:
    """The id git gives ``path``'s content as a blob (``git hash-object``); None when unreadable."""
    import hashlib  # here: the prompt hook imports this module for note() alone, and hashlib is slow to load

    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()


def _ref(repo: Repository, ref: str) -> str | None:
    for base in (repo.git_dir, repo.common_dir):
        try:
            return (base / ref).read_text(encoding="utf-8").strip() or None
        except OSError:
            continue
    try:
        packed = (repo.common_dir / "packed-refs").read_text(encoding="utf-8")
    except OSError:
        return None
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref:
            return sha
    return None


def head(repo: Repository) -> tuple[str | None, str | None]:
    """The commit checked out in ``repo``'s work tree and its branch (None when detached)."""
    try:
        text = (repo.git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None, None
    if not text.startswith("ref:"):
        return text or None, None
    ref = text[len("ref:") :].strip()
    return _ref(repo, ref), ref.removeprefix("refs/heads/")


def _relative(path: Path, work_tree: Path) -> str | None:
    for top, target in ((work_tree, path), (Path(os.path.realpath(work_tree)), Path(os.path.realpath(path)))):
        try:
            return target.relative_to(top).as_posix()
        except ValueError:
            continue
    return None


def snapshot(directory: Path, paths: Iterable[str]) -> dict[str, Any] | None:
    """The code state of ``paths`` (absolute, or relative to ``directory``) in ``directory``'s work
    tree: ``{"files": {relative path: blob id}, "commit": ..., "branch": ...}``; None outside git or
    when none of them is in the work tree."""
    repo = repository(directory)
    if repo is None:
        return None
    files: dict[str, str | None] = {}
    for given in paths:
        path = Path(os.path.normpath(given if os.path.isabs(given) else directory / given))
        relative = _relative(path, repo.work_tree)
        if relative is not None and not relative.startswith(".git/"):
            files[relative] = blob_id(path)
    if not files:
        return None
    commit, branch = head(repo)
    return {"files": files, "commit": commit, "branch": branch}


class WorkTree:
    """A caller's work tree, compared with what memories kept: each file hashed once per recall."""

    def __init__(self, directory: Path | None) -> None:
        self._repo = repository(directory) if directory is not None else None
        self._blobs: dict[str, str | None] = {}
        self._branch: tuple[str | None] | None = None

    @property
    def branch(self) -> str | None:
        """The branch checked out now; None when detached or outside git."""
        if self._branch is None:
            self._branch = (head(self._repo)[1] if self._repo is not None else None,)
        return self._branch[0]

    def changed(self, files: dict[str, str | None]) -> list[str]:
        """Those of ``files`` whose content differs now from the blob id kept for it."""
        if self._repo is None:
            return []
        found = []
        for relative, kept in files.items():
            if relative not in self._blobs:
                self._blobs[relative] = blob_id(self._repo.work_tree / relative)
            if self._blobs[relative] != kept:
                found.append(relative)
        return found

    def other_branch(self, branch: str | None) -> str | None:
        """``branch`` when a memory was made on a branch other than the one checked out now."""
        if branch is None or self._repo is None or branch == self.branch:
            return None
        return branch


def note(changed: Iterable[str], branch: str | None) -> str:
    """``(src/db.py changed since; made on branch feature)``: how a recalled memory's text says that
    the code moved on (the recall tool's text and the hooks' injection alike); empty when it did not."""
    files = list(changed)
    parts = [f"{', '.join(files)} changed since"] if files else []
    if branch:
        parts.append(f"made on branch {branch}")
    return f"({'; '.join(parts)})" if parts else ""
