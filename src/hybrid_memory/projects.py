"""How a directory names a project: one rule for the MCP server (its client's roots), the hooks and
the CLI (their working directory), and the viewer (the names it shows).

A directory inside a git work tree belongs to its repository: the project is the path of the
repository's main work tree, found through git's common dir, so every worktree and every
subdirectory of one repository share one project, and two repositories never share one because
their folders are named alike. Outside git, the project is the directory's own full path. People
read a shorter name, the folder's (:func:`labels` tells two apart when they collide).

Stdlib only, and no ``git`` process: the hooks import it on their fast path, and reading ``.git``
takes a few ``stat`` calls.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import NamedTuple
from urllib.parse import quote, unquote, urlparse

MAX_PROJECT_CHARS = 1024
PROJECT_META = "hybrid-memory/project"
"""The ``_meta`` key by which a server that joined the host passes, on each request it relays, its own
configured project (``HYBRID_MEMORY_PROJECT``), or null when its client's roots decide: a joined
session is scoped as the server its client started, never as the host that happens to hold the store."""
"""The longest project name kept: room for a deep directory's path."""

_DRIVE = re.compile(r"^/?([A-Za-z]:)[\\/]")
"""A Windows path (``S:\\01_Repos\\x``, or ``/S:/01_Repos/x`` from a ``file:`` URI)."""


class Repository(NamedTuple):
    """Where a directory sits in git: its work tree's top, that work tree's git dir, the common dir."""

    work_tree: Path
    git_dir: Path
    common_dir: Path

    @property
    def project(self) -> str:
        """The main work tree (the common dir's parent when it is a ``.git``), else the common dir."""
        common = Path(os.path.realpath(self.common_dir))
        return str(common.parent if common.name == ".git" else common)


def _git_dir(dot_git: Path) -> Path | None:
    """The git dir a ``.git`` entry stands for: itself, or where its ``gitdir:`` line points."""
    if dot_git.is_dir():
        return dot_git if (dot_git / "HEAD").is_file() else None
    try:
        line = dot_git.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return None
    if not line.startswith("gitdir:"):
        return None
    target = Path(line[len("gitdir:") :].strip())
    return target if target.is_absolute() else (dot_git.parent / target).resolve()


def repository(directory: str | Path) -> Repository | None:
    """The git work tree ``directory`` is in (its top, git dir and common dir); None outside git."""
    start = Path(directory)
    if not start.is_absolute():
        start = start.absolute()
    for candidate in (start, *start.parents):
        dot_git = candidate / ".git"
        if not os.path.lexists(dot_git):
            continue
        git_dir = _git_dir(dot_git)
        if git_dir is None or candidate == _home():
            return None  # a home directory kept in git (dotfiles) does not make every folder one project
        common = git_dir
        try:
            pointer = (git_dir / "commondir").read_text(encoding="utf-8").strip()
        except OSError:
            pointer = ""
        if pointer:
            common = Path(pointer) if Path(pointer).is_absolute() else (git_dir / pointer).resolve()
        return Repository(candidate, git_dir, common)
    return None


def _home() -> Path | None:
    try:
        return Path.home()
    except RuntimeError:
        return None


def _windows(path: str) -> str | None:
    """``path`` in POSIX form (``S:\\a\\b`` as ``/s/a/b``, as transcripts are read) when it is a
    Windows path, else None."""
    found = _DRIVE.match(path)
    if found is None:
        return None
    parts = [p for p in PureWindowsPath(path.lstrip("/")).parts[1:] if p not in ("\\", "/")]
    return "/" + "/".join([found.group(1)[0].lower(), *parts])


def project_of_directory(directory: str | Path) -> str:
    """The project of ``directory``: its repository's, else its own full path."""
    text = str(directory)
    windows = _windows(text)
    if windows is not None and os.name != "nt":
        return windows[:MAX_PROJECT_CHARS]  # a transcript from a Windows machine: no such directory here
    found = repository(text)
    project = found.project if found is not None else os.path.realpath(text)
    return project[:MAX_PROJECT_CHARS]


def project_name(uri: str, name: str | None = None) -> str | None:
    """The project of an MCP root: its directory's (see :func:`project_of_directory`) for a
    ``file:`` URI; for another URI, its name or its path's last segment; None when none gives one."""
    parsed = urlparse(uri)
    path = unquote(parsed.path)
    if parsed.scheme == "file" and path.strip("/"):
        return project_of_directory(path)
    return legacy_project_name(uri, name)


def legacy_project_name(uri: str, name: str | None = None) -> str | None:
    """How a root was named before projects followed repositories: its name, else its last segment.

    Kept to find a store's memories under their old name (:mod:`hybrid_memory.service.adopt`).
    """
    label = (name or "").strip()
    if not label:
        label = unquote(urlparse(uri).path).rstrip("/").rsplit("/", 1)[-1].strip()
    return label[:128] or None


def root_uri(directory: str | Path) -> str:
    """The ``file://`` URI an MCP client gives as the root for ``directory``."""
    windows = _windows(str(directory))
    if windows is not None and os.name != "nt":
        return "file://" + quote(windows)
    return "file://" + quote(str(Path(directory).absolute()))


def label(project: str) -> str:
    """What people read for ``project``: a path's last folder, else the name as it is."""
    windows = _windows(project)
    if windows is not None:
        return PurePosixPath(windows).name or windows
    if project.startswith("/"):
        return PurePosixPath(project).name or project
    return project


def labels(projects: Iterable[str]) -> dict[str, str]:
    """Each project's readable name: its folder's, with as many parent folders as tell it apart
    from another of the same name (``alice/api`` and ``bob/api``)."""
    keys = list(dict.fromkeys(projects))
    parts = {k: _segments(k) for k in keys}
    depth = dict.fromkeys(keys, 1)
    while True:
        shown = {k: "/".join(parts[k][-depth[k] :]) for k in keys}
        seen: dict[str, list[str]] = {}
        for key, name in shown.items():
            seen.setdefault(name, []).append(key)
        clashing = [k for same in seen.values() if len(same) > 1 for k in same if depth[k] < len(parts[k])]
        if not clashing:
            return shown
        for key in clashing:
            depth[key] += 1


def _segments(project: str) -> list[str]:
    if _windows(project) is None and not project.startswith("/"):
        return [project]
    return [s for s in re.split(r"[\\/]", project) if s] or [project]
