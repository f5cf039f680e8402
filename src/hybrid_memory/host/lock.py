"""The data dir's host lock and socket, shared by servers and commands (standard library only).

Whoever holds ``serve.lock`` owns the embedded stores: a server hosting them for every
client on ``serve.sock``, or a command that found no server and opened them itself. The
holder writes what it is into the lock file, so a server that starts while a command
works waits for that command instead of giving up after its usual bound.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:  # ``typing`` and ``socket`` are among the slowest of a prompt hook's imports
    import argparse
    import socket

SOCKET_NAME = "serve.sock"
HOST_LOCK_NAME = "serve.lock"
MAX_SOCKET_PATH = 104  # sun_path holds 108 bytes on Linux, 104 on macOS
COMMAND = "command"
SERVER = "server"


APP_NAME = "mcp-hybrid-memory"


def default_data_dir() -> Path:
    """Where the data lives when nothing says otherwise: the user data directory (platformdirs' rule;
    on Linux and macOS worked out here, so a hook does not load platformdirs and its imports)."""
    if sys.platform == "linux" and "ANDROID_DATA" not in os.environ:
        return (
            Path(os.environ.get("XDG_DATA_HOME", "").strip() or os.path.expanduser("~/.local/share"))
            / APP_NAME
        )
    if sys.platform == "darwin":
        return Path(os.path.expanduser("~/Library/Application Support")) / APP_NAME
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False))


def data_dir_from_env(flag: Path | None = None) -> Path:
    """The data dir as the settings read it, with the standard library (for hooks and joining commands):
    ``flag`` (``--data-dir``), else ``HYBRID_MEMORY_DATA_DIR`` (its name in any case), else the default."""
    if flag is not None:
        return flag
    env = {name.upper(): value.strip() for name, value in os.environ.items()}
    named = env.get("HYBRID_MEMORY_DATA_DIR")
    return Path(named).expanduser() if named else default_data_dir()


def add_data_dir_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--data-dir`` option of each command that reaches the store (see :func:`data_dir_from_env`)."""
    parser.add_argument("--data-dir", type=Path, help="where embedded stores live (HYBRID_MEMORY_DATA_DIR)")


def socket_path(data_dir: Path) -> Path:
    return data_dir / SOCKET_NAME


def lock_path(data_dir: Path) -> Path:
    return data_dir / HOST_LOCK_NAME


def socket_fits(data_dir: Path) -> bool:
    return len(os.fsencode(socket_path(data_dir))) < MAX_SOCKET_PATH


def connect(data_dir: Path) -> socket.socket | None:
    """A connection to the data dir's host; None when no server listens there (other failures raise)."""
    if not socket_fits(data_dir):
        return None  # no server can listen on a path this long: it refused to start
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(str(socket_path(data_dir)))
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.ENOENT, errno.ECONNREFUSED, errno.EAGAIN, errno.ENOTDIR):
            return None
        raise
    return sock


def try_lock(data_dir: Path, holder: str, what: str = "") -> int | None:
    """The lock's descriptor when we got it (ours to close, which releases it); None when it is held."""
    fd = os.open(lock_path(data_dir), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{holder} {os.getpid()} {what}".strip().encode() + b"\n", 0)
    return fd


def is_free(data_dir: Path) -> bool:
    """Whether no process holds the lock now (checked by taking it for a moment, writing nothing)."""
    try:
        fd = os.open(lock_path(data_dir), os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    finally:
        os.close(fd)  # releases it when we got it
    return True


def holder_pid(data_dir: Path) -> int | None:
    """The pid the lock's last holder wrote (it may have released the lock since)."""
    with contextlib.suppress(OSError, ValueError, IndexError):
        return int(lock_path(data_dir).read_text().split()[1])
    return None


def command_holding(data_dir: Path) -> str | None:
    """``'hybrid-memory NAME (pid N)'`` when a live command holds the lock; None otherwise."""
    with contextlib.suppress(OSError, ValueError):
        holder, pid, *what = lock_path(data_dir).read_text().split()
        if holder == COMMAND:
            os.kill(int(pid), 0)  # raises when no such process is left
            return f"hybrid-memory {' '.join(what)} (pid {pid})"
    return None
