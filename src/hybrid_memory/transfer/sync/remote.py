"""Where machines meet: a folder, or a git repository (a bare one, a private GitHub repo).

Both hold the same layout, and nothing in it is ever rewritten: each sync of each machine
adds one file, ``changes/<machine>/<seq>.jsonl``. A folder gets the file by a rename, so it
is there whole or not at all. A repository gets it by a commit pushed to ``main``: a push
updates the branch only once every object has arrived, so a push cut off half way leaves
the branch as it was, and the next sync writes the file again. Two machines that push at
once never touch the same file, so the loser rebases onto the winner and pushes again.

The git remote is worked on through a clone under the data dir (``sync/<key>/clone``),
brought level with the remote before every sync, its unpushed commits dropped.
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

import anyio

from hybrid_memory.errors import BackendUnavailableError, InvalidInputError

BRANCH = "main"
CHANGES = "changes"
_PUSH_TRIES = 5
_NAME = re.compile(r"^(?P<seq>\d{6,})\.jsonl$")
_GIT_ENV = {
    "GIT_TERMINAL_PROMPT": "0",  # a private repository without credentials fails, never waits for a password
    "GIT_AUTHOR_NAME": "hybrid-memory",
    "GIT_AUTHOR_EMAIL": "hybrid-memory@localhost",
    "GIT_COMMITTER_NAME": "hybrid-memory",
    "GIT_COMMITTER_EMAIL": "hybrid-memory@localhost",
}


@dataclass(frozen=True)
class ChangeFile:
    machine: str
    seq: int
    path: Path


def remote_key(remote: str) -> str:
    """A short, stable name for ``remote`` on this machine (its clone and its sync state live there)."""
    return hashlib.sha256(remote.encode()).hexdigest()[:16]


def file_name(seq: int) -> str:
    return f"{seq:06d}.jsonl"


def change_files(root: Path) -> list[ChangeFile]:
    """Every change file under ``root``, by machine then sequence."""
    found: list[ChangeFile] = []
    base = root / CHANGES
    if not base.is_dir():
        return found
    for machine in sorted(p for p in base.iterdir() if p.is_dir()):
        for path in machine.iterdir():
            if (name := _NAME.match(path.name)) is not None:
                found.append(ChangeFile(machine.name, int(name["seq"]), path))
    return sorted(found, key=lambda f: (f.machine, f.seq))


def is_folder(remote: str) -> bool:
    """A plain folder (not a repository): an existing directory with neither ``.git`` nor ``HEAD``."""
    path = Path(remote)
    return path.is_dir() and not (path / ".git").exists() and not (path / "HEAD").is_file()


def absolute(remote: str) -> str:
    """``remote`` as a command running elsewhere (the server) must read it: a local path made absolute."""
    if "://" in remote or not Path(remote).expanduser().exists():
        return remote
    return str(Path(remote).expanduser().absolute())


class FolderRemote:
    """A folder both machines see (a mounted disk, a synced folder)."""

    def __init__(self, path: Path) -> None:
        self._path = path

    async def pull(self) -> Path:
        return self._path

    async def publish(self, machine: str, seq: int, text: str) -> None:
        await anyio.to_thread.run_sync(_write_whole, self._path / CHANGES / machine / file_name(seq), text)


class GitRemote:
    """A git repository, through a clone of it under the data dir."""

    def __init__(self, url: str, workdir: Path) -> None:
        self._url = url
        self._clone = workdir / "clone"

    async def pull(self) -> Path:
        if not (self._clone / ".git").is_dir():
            self._clone.parent.mkdir(parents=True, exist_ok=True)
            await _git(self._clone.parent, "clone", "--quiet", self._url, self._clone.name)
        else:
            await _git(self._clone, "fetch", "--quiet", "origin")
        remote_branch = f"refs/remotes/origin/{BRANCH}"
        if await _git(self._clone, "rev-parse", "--verify", "--quiet", remote_branch, check=False):
            await _git(self._clone, "checkout", "--quiet", "-B", BRANCH, remote_branch)
            await _git(self._clone, "reset", "--quiet", "--hard", remote_branch)
        else:  # an empty repository: its first commit starts the branch (a commit never pushed is dropped)
            await _git(self._clone, "symbolic-ref", "HEAD", f"refs/heads/{BRANCH}")
            await _git(self._clone, "update-ref", "-d", f"refs/heads/{BRANCH}", check=False)
            await _git(self._clone, "rm", "-r", "--cached", "--quiet", "--ignore-unmatch", ".", check=False)
        await _git(self._clone, "clean", "--quiet", "-fdx")
        return self._clone

    async def publish(self, machine: str, seq: int, text: str) -> None:
        relative = f"{CHANGES}/{machine}/{file_name(seq)}"
        await anyio.to_thread.run_sync(_write_whole, self._clone / relative, text)
        await _git(self._clone, "add", "--", relative)
        await _git(self._clone, "commit", "--quiet", "--no-verify", "-m", f"hybrid-memory: {relative}")
        for _ in range(_PUSH_TRIES):
            if await _git(self._clone, "push", "--quiet", "origin", f"HEAD:refs/heads/{BRANCH}", check=False):
                return
            # Another machine pushed first: its files are not ours, so a rebase never conflicts.
            await _git(self._clone, "fetch", "--quiet", "origin")
            await _git(self._clone, "rebase", "--quiet", f"origin/{BRANCH}")
        raise BackendUnavailableError(
            f"could not push to {self._url} after {_PUSH_TRIES} tries; run hybrid-memory sync again"
        )


def open_remote(remote: str, workdir: Path) -> FolderRemote | GitRemote:
    if not remote.strip():
        raise InvalidInputError("Name the remote: a folder, a bare git repository, or a git URL.")
    if is_folder(remote):
        return FolderRemote(Path(remote))
    return GitRemote(remote, workdir)


async def _git(cwd: Path, *args: str, check: bool = True) -> bool:
    """Run ``git args`` in ``cwd``, output captured (a server's stdout is its protocol); succeeded?"""
    env = {**os.environ, **_GIT_ENV}
    done = await anyio.run_process(
        ["git", "-c", "core.hooksPath=/dev/null", *args], cwd=cwd, env=env, check=False
    )
    if done.returncode != 0 and check:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        reason = said[-1] if said else f"exit code {done.returncode}"
        raise BackendUnavailableError(f"git {args[0]} failed: {reason}")
    return done.returncode == 0


def _write_whole(path: Path, text: str) -> None:
    """``text`` into ``path`` by a rename: a reader sees the whole file or none."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("w", encoding="utf-8") as out:
        out.write(text)
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
