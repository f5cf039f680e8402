"""The data dir's host lock and socket, shared by servers and commands (standard library only).

Whoever holds ``serve.lock`` owns the embedded stores: a server hosting them for every
client on ``serve.sock``, or a command that found no server and opened them itself. The
holder writes what it is into the lock file, so a server that starts while a command
works waits for that command instead of giving up after its usual bound.
"""

from __future__ import annotations

import errno
import fcntl
import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:  # ``typing``, ``socket`` and ``pathlib`` are among the slowest of a prompt hook's imports
    import argparse
    import socket
    from pathlib import Path

    StrPath = str | os.PathLike[str]
    """A path as the hooks hold it (a string: ``pathlib`` loads slowly) or as the rest does."""

SOCKET_NAME = "serve.sock"
HOST_LOCK_NAME = "serve.lock"
MAX_SOCKET_PATH = 104  # sun_path holds 108 bytes on Linux, 104 on macOS
COMMAND = "command"
SERVER = "server"


APP_NAME = "mcp-hybrid-memory"


def default_data_dir() -> Path:
    """Where the data lives when nothing says otherwise: the user data directory (platformdirs' rule;
    on Linux and macOS worked out here, so a hook does not load platformdirs and its imports)."""
    from pathlib import Path

    return Path(_default_data_dir())


def _default_data_dir() -> str:
    if sys.platform == "linux" and "ANDROID_DATA" not in os.environ:
        shared = os.environ.get("XDG_DATA_HOME", "").strip() or os.path.expanduser("~/.local/share")
        return os.path.join(shared, APP_NAME)
    if sys.platform == "darwin":
        return os.path.join(os.path.expanduser("~/Library/Application Support"), APP_NAME)
    import platformdirs

    return platformdirs.user_data_dir(APP_NAME, appauthor=False)


def data_dir_from_env(flag: Path | None = None) -> Path:
    """The data dir as the settings read it, with the standard library (for hooks and joining commands):
    ``flag`` (``--data-dir``), else ``HYBRID_MEMORY_DATA_DIR`` (its name in any case), else the default."""
    if flag is not None:
        return flag
    from pathlib import Path

    return Path(data_dir_named())


def data_dir_named() -> str:
    """:func:`data_dir_from_env` without a flag, as a string: the hooks', which do without ``pathlib``."""
    env = {name.upper(): value.strip() for name, value in os.environ.items()}
    named = env.get("HYBRID_MEMORY_DATA_DIR")
    return os.path.expanduser(named) if named else _default_data_dir()


def add_data_dir_argument(parser: argparse.ArgumentParser) -> None:
    """The ``--data-dir`` option of each command that reaches the store (see :func:`data_dir_from_env`)."""
    from pathlib import Path

    parser.add_argument("--data-dir", type=Path, help="where embedded stores live (HYBRID_MEMORY_DATA_DIR)")


def socket_path(data_dir: StrPath) -> str:
    return os.path.join(data_dir, SOCKET_NAME)


def lock_path(data_dir: StrPath) -> str:
    return os.path.join(data_dir, HOST_LOCK_NAME)


def socket_fits(data_dir: StrPath) -> bool:
    return len(os.fsencode(socket_path(data_dir))) < MAX_SOCKET_PATH


def connect(data_dir: StrPath) -> socket.socket | None:
    """A connection to the data dir's host; None when no server listens there (other failures raise)."""
    if not socket_fits(data_dir):
        return None  # no server can listen on a path this long: it refused to start
    import socket

    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(socket_path(data_dir))
    except OSError as exc:
        sock.close()
        if exc.errno in (errno.ENOENT, errno.ECONNREFUSED, errno.EAGAIN, errno.ENOTDIR):
            return None
        raise
    return sock


def try_lock(data_dir: StrPath, holder: str, what: str = "") -> int | None:
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


def is_free(data_dir: StrPath) -> bool:
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


def _holder(data_dir: StrPath) -> list[str]:
    """What the lock's last holder wrote: what it is, its pid, what it does (nothing: no lock file)."""
    try:
        with open(lock_path(data_dir)) as f:
            return f.read().split()
    except OSError:
        return []


def holder_pid(data_dir: StrPath) -> int | None:
    """The pid the lock's last holder wrote (it may have released the lock since)."""
    try:
        return int(_holder(data_dir)[1])
    except (ValueError, IndexError):
        return None


def command_holding(data_dir: StrPath) -> str | None:
    """``'hybrid-memory NAME (pid N)'`` when a live command holds the lock; None otherwise."""
    try:
        holder, pid, *what = _holder(data_dir)
        if holder == COMMAND:
            os.kill(int(pid), 0)  # raises when no such process is left
            return f"hybrid-memory {' '.join(what)} (pid {pid})"
    except (OSError, ValueError):
        return None
    return None


_claimed: list[int] = []
"""The host lock a headless host took before it loaded anything (:func:`claim_for_headless`)."""


def claim_for_headless(argv: list[str]) -> bool:
    """Take the host lock for ``hybrid-memory serve --headless --data-dir DIR`` before anything loads.

    Every client that finds no host starts one, so several often start at once; all but one find
    the lock held. Checked here, such a start ends in the time Python starts, where building the
    server first cost a second or more of CPU each. False when another process holds the lock (the
    caller ends); True otherwise, the lock kept for :func:`claimed` when this process took it. A
    data dir given otherwise than by ``--data-dir``, or one that cannot be locked here, is left to
    the server to lock and report as it always does.
    """
    data_dir = next(
        (argv[i + 1] for i, arg in enumerate(argv[:-1]) if arg == "--data-dir"),
        next((arg.split("=", 1)[1] for arg in argv if arg.startswith("--data-dir=")), None),
    )
    if not data_dir or not socket_fits(data_dir):
        return True
    try:
        fd = try_lock(data_dir, SERVER)
    except OSError:
        return True
    if fd is None:
        print(f"another process already hosts the memory store in {data_dir}", file=sys.stderr)
        return False
    _claimed.append(fd)
    return True


def claimed() -> int | None:
    """The host lock :func:`claim_for_headless` took (handed over once), or None."""
    return _claimed.pop() if _claimed else None
