"""Finding the data dir's host, or starting one: the one wait loop of every client (standard library only).

The hooks import it on their fast path.
"""

from __future__ import annotations

import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path

from hybrid_memory.host import lock
from hybrid_memory.host.wire import JOIN_TIMEOUT_S

HOST_LOG = "host.log"
"""Where a detached host writes its log (it has no terminal), in the data dir."""


def start_headless_host(data_dir: Path, env: dict[str, str] | None = None) -> None:
    """Start ``hybrid-memory serve --headless`` on ``data_dir`` in its own session, off the caller's pipes.

    It outlives the caller and exits after an idle period; when another process hosts
    already, it exits at once.
    """
    import subprocess  # only here: a hook that finds a host running never needs it

    data_dir.mkdir(parents=True, exist_ok=True)
    log = open(data_dir / HOST_LOG, "ab")  # noqa: SIM115 - handed to the child, closed here after
    try:
        subprocess.Popen(
            [sys.executable, "-m", "hybrid_memory", "serve", "--headless", "--data-dir", str(data_dir)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            env=env,
            close_fds=True,
        )
    finally:
        log.close()


class HostWait:
    """One wait for the data dir's host; a loop calls :meth:`attempt` every ``RETRY_S`` until it returns.

    Each attempt tries, in order: the host's socket (``join``); starting a headless host,
    once (``start``); the host lock, recording ``holder`` and ``what`` in it (``holder``).
    While a command holds the lock, the wait lasts as long as that command does; otherwise
    it gives up ``timeout_s`` after it began (or after that command ended), raising what
    ``fail`` makes of the reason (a clause; the caller adds what to do).
    """

    def __init__(
        self,
        data_dir: Path,
        fail: Callable[[str], Exception],
        *,
        join: bool = True,
        start: bool = False,
        holder: str | None = None,
        what: str = "",
        timeout_s: float = JOIN_TIMEOUT_S,
        waiting_for: Callable[[str], None] | None = None,
    ) -> None:
        self._data_dir = data_dir
        self._fail = fail
        self._join = join
        self._start = start
        self._holder = holder
        self._what = what
        self._timeout_s = timeout_s
        self._waiting_for = waiting_for
        self._deadline = time.monotonic() + timeout_s
        self._started = self._told = False

    def attempt(self) -> socket.socket | int | None:
        """A connection to the host, the lock's descriptor (ours to close), or None: try again later."""
        data_dir = self._data_dir
        if self._join:
            try:
                sock = lock.connect(data_dir)
            except OSError as exc:
                raise self._fail(f"cannot connect to the memory host on {data_dir}: {exc}") from exc
            if sock is not None:
                return sock
        if self._start and not self._started:
            start_headless_host(data_dir, dict(os.environ))
            self._started = True
        if self._holder is not None:
            fd = lock.try_lock(data_dir, self._holder, self._what)
            if fd is not None:
                return fd
        command = lock.command_holding(data_dir)
        if command is not None:
            # A command opened the store itself (no server was running): the host's once it is done.
            self._deadline = time.monotonic() + self._timeout_s
            if not self._told and self._waiting_for is not None:
                self._waiting_for(command)
            self._told = True
        elif self._join and not lock.socket_fits(data_dir):
            raise self._fail(
                f"A hybrid-memory server holds the store in {data_dir}, whose path is too long for a "
                "socket to join it by"
            )
        elif time.monotonic() > self._deadline:
            if self._start:
                raise self._fail(f"the memory host on {data_dir} did not start within {self._timeout_s:g} s")
            if not self._join:
                raise self._fail(
                    f"Another hybrid-memory server already holds the store in {data_dir} "
                    f"(it holds {lock.lock_path(data_dir)})"
                )
            if self._holder is None:
                raise self._fail(f"no memory host answered on {data_dir} within {self._timeout_s:g} s")
            raise self._fail(
                f"Another hybrid-memory server holds {lock.lock_path(data_dir)} but has not answered on "
                f"{lock.socket_path(data_dir)} for {self._timeout_s:g} s"
            )
        return None
