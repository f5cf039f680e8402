"""An embedded store's directory: the lock that makes one process its owner, and the file
that records which embedding model filled it.

The lock is an exclusive ``flock`` on ``<dir>/lock`` holding the owner's pid; the kernel
releases it when the process ends, however it ends, so a crash never leaves a stale lock.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

from hybrid_memory.backends import _qdrant_common as common
from hybrid_memory.errors import BackendError, StoreLockedError

LOCK_FILE = "lock"
IDENTITY_FILE = "store.json"


def lock_directory(path: Path) -> int:
    """Take the store's exclusive lock; its file descriptor holds it until closed."""
    lock_path = path / LOCK_FILE
    # No O_TRUNC: a process that fails to get the lock must not wipe the owner's pid.
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        owner = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        if owner == str(os.getpid()):
            raise StoreLockedError(
                f"The memory store at {path} is already open in this process (pid {owner}); "
                "open it once and share the store."
            ) from None
        raise StoreLockedError(
            f"The memory store at {path} is already in use by another hybrid-memory process "
            f"(pid {owner}). Run one shared server (`hybrid-memory serve --transport http`) and "
            "point every client at it, or set HYBRID_MEMORY_DATA_DIR to another directory."
        ) from None
    except OSError as exc:
        os.close(fd)
        raise BackendError(f"Could not lock the memory store at {path}: {exc}") from exc
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def read_identity(path: Path) -> common.StoreIdentity | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise BackendError(f"Could not read {path}: {exc}. Restore it or move the store away.") from exc
    identity = common.StoreIdentity.from_json(data)
    if identity is None:
        raise BackendError(f"{path} does not name a model and dimension. Restore it or move the store away.")
    return identity


def write_identity(path: Path, identity: common.StoreIdentity) -> None:
    # Written whole or not at all: a torn store.json would make the store unopenable.
    tmp = path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(identity.to_json(), f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
