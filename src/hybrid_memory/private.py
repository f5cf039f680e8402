"""The data dir is its owner's alone: folders 0700, files 0600, whatever the umask.

Captured sessions hold what people paste, so nothing under the data dir may be readable
by another user. Two halves: :func:`owner_only_umask` at the entry points of a process
that writes there (the command, the hooks, the host), so every file it creates -- the
stores' own files (Qdrant Edge writes its segments and WAL itself), SQLite's journal,
logs, sockets, locks, capture state, exports -- is born private; and :func:`make_private`
when a data dir is opened, which creates it 0700 and tightens what an earlier version or
another tool left readable. Stdlib only: the hooks import it on their fast path.
"""

from __future__ import annotations

import os
import stat

TYPE_CHECKING = False
if TYPE_CHECKING:  # paths as strings or ``Path``: ``pathlib`` is among the slowest of a hook's imports
    StrPath = str | os.PathLike[str]

OWNER_ONLY_UMASK = 0o077
"""Nothing a process creates is readable, writable or searchable by group or others."""


def owner_only_umask() -> None:
    """Keep every file and folder this process creates to its owner (0600 files, 0700 folders)."""
    os.umask(os.umask(OWNER_ONLY_UMASK) | OWNER_ONLY_UMASK)


def make_private(data_dir: StrPath) -> None:
    """Create ``data_dir`` (0700) if needed and take group and other access off everything in it."""
    owner_only_umask()
    os.makedirs(data_dir, mode=0o700, exist_ok=True)
    tighten(data_dir)


def tighten(path: StrPath) -> None:
    """``path`` and everything under it: folders 0700, files (sockets, locks, ...) owner-only bits.

    Only what this user owns is changed (another's file would refuse anyway); symbolic
    links are left alone (their target may be outside the data dir); a file that goes
    away while walking is skipped.
    """
    _restrict(path)
    for root, dirs, files in os.walk(path):
        for name in dirs + files:
            _restrict(os.path.join(root, name))


def _restrict(path: StrPath) -> None:
    try:
        info = os.lstat(path)
        if stat.S_ISLNK(info.st_mode) or info.st_uid != os.geteuid():
            return
        mode = stat.S_IMODE(info.st_mode)
        wanted = 0o700 if stat.S_ISDIR(info.st_mode) else mode & 0o700
        if mode != wanted:
            os.chmod(path, wanted)
    except FileNotFoundError:
        return
