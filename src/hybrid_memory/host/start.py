"""Finding the data dir's host, or starting one: the one wait loop of every client (standard library only).

The hooks import it on their fast path.
"""

from __future__ import annotations

import os
import sys
import time

from hybrid_memory.host import lock
from hybrid_memory.host.wire import JOIN_TIMEOUT_S, RETRY_S

TYPE_CHECKING = False
if TYPE_CHECKING:  # ``socket`` and ``pathlib`` are among the slowest of a prompt hook's imports
    import socket
    from collections.abc import Callable, Iterator

    from hybrid_memory.host.lock import StrPath

HOST_LOG = "host.log"
"""Where a detached host writes its log (it has no terminal), in the data dir."""


def start_headless_host(data_dir: StrPath) -> None:
    """Start ``hybrid-memory serve --headless`` on ``data_dir`` in its own session, off the caller's pipes.

    It outlives the caller and exits after an idle period; when another process hosts
    already, it exits at once.
    """
    import subprocess  # only here: a hook that finds a host running never needs it

    os.makedirs(data_dir, exist_ok=True)
    log = open(os.path.join(data_dir, HOST_LOG), "ab")  # noqa: SIM115 - handed to the child, closed after
    try:
        subprocess.Popen(
            [sys.executable, "-m", "hybrid_memory", "serve", "--headless", "--data-dir", os.fspath(data_dir)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )
    finally:
        log.close()


def attempts(
    data_dir: StrPath,
    fail: Callable[[str], Exception],
    *,
    join: bool = True,
    start: bool = False,
    holder: str | None = None,
    what: str = "",
    timeout_s: float = JOIN_TIMEOUT_S,
    waiting_for: Callable[[str], None] | None = None,
    patient: bool = True,
) -> Iterator[socket.socket | int | None]:
    """One wait for the data dir's host, as steps: each tries once and yields what it got, None meaning
    "try again in ``RETRY_S``" (the caller sleeps, with ``time`` or anyio, and asks for the next step).

    Each step tries, in order: the host's socket (``join``); starting a headless host, once
    (``start``); the host lock, recording ``holder`` and ``what`` in it (``holder``). It yields
    a connection to the host or the lock's descriptor (ours to close). While a command holds
    the lock, the wait lasts as long as that command does (unless not ``patient``: a prompt
    cannot wait for an export); otherwise it gives up ``timeout_s`` after it began (or after that
    command ended), raising what ``fail`` makes of the reason (a clause; the caller adds what to do).
    """
    deadline = time.monotonic() + timeout_s
    started = told = False
    while True:
        if join:
            try:
                sock = lock.connect(data_dir)
            except OSError as exc:
                raise fail(f"cannot connect to the memory host on {data_dir}: {exc}") from exc
            if sock is not None:
                yield sock
                return
        if start and not started:
            start_headless_host(data_dir)
            started = True
        fd = lock.try_lock(data_dir, holder, what) if holder is not None else None
        if fd is not None:
            yield fd
            return
        command = lock.command_holding(data_dir)
        if command is not None and not patient and time.monotonic() > deadline:
            raise fail(f"`hybrid-memory {command}` held the store in {data_dir} for {timeout_s:g} s")
        if command is not None:
            # A command opened the store itself (no server was running): the host's once it is done.
            deadline = deadline if not patient else time.monotonic() + timeout_s
            if not told and waiting_for is not None:
                waiting_for(command)
            told = True
        elif join and not lock.socket_fits(data_dir):
            raise fail(
                f"A hybrid-memory server holds the store in {data_dir}, whose path is too long for a "
                "socket to join it by"
            )
        elif time.monotonic() > deadline:
            raise fail(_timed_out(data_dir, timeout_s, start=start, join=join, holder=holder))
        yield None


def _timed_out(data_dir: StrPath, timeout_s: float, *, start: bool, join: bool, holder: str | None) -> str:
    if start:
        return f"the memory host on {data_dir} did not start within {timeout_s:g} s"
    if not join:
        held = lock.lock_path(data_dir)
        return f"Another hybrid-memory server already holds the store in {data_dir} (it holds {held})"
    if holder is None:
        return f"no memory host answered on {data_dir} within {timeout_s:g} s"
    return (
        f"Another hybrid-memory server holds {lock.lock_path(data_dir)} but has not answered on "
        f"{lock.socket_path(data_dir)} for {timeout_s:g} s"
    )


def wait(steps: Iterator[socket.socket | int | None]) -> socket.socket | int:
    """Take the ``steps`` of :func:`attempts`, sleeping ``RETRY_S`` between them, to their end."""
    for got in steps:
        if got is not None:
            return got
        time.sleep(RETRY_S)
    raise AssertionError("attempts() ends only after yielding what it got")
