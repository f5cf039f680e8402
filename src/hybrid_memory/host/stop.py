"""``hybrid-memory stop``: ask the data dir's host to stop, and wait until it has let go of the store.

The host is asked over its socket (:data:`~hybrid_memory.host.wire.STOP`); it answers
with its pid, then stops as SIGTERM stops it: what is in flight is answered, the stores
close, the lock is released last. Standard library only, like every client of the host.
"""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import NamedTuple

from hybrid_memory.host import lock
from hybrid_memory.host.start import HOST_LOG
from hybrid_memory.host.wire import RETRY_S, STOP, line

STOP_WITHIN_S = 60.0
"""How long a host may take to close its stores once asked to stop."""


class Stopped(NamedTuple):
    said: str
    """One line saying what was done."""
    code: int
    """0: stopped, or nothing to stop; 1: the host did not let go in time."""


def stop(data_dir: Path, timeout_s: float = STOP_WITHIN_S) -> Stopped:
    """Stop the host of ``data_dir`` and wait until the store is free (or another process took it over)."""
    sock = lock.connect(data_dir) if data_dir.is_dir() else None
    if sock is None:
        command = lock.command_holding(data_dir) if data_dir.is_dir() else None
        if command is not None:
            return Stopped(
                f"no memory host runs on {data_dir}; {command} holds the store until it is done", 0
            )
        return Stopped(f"no memory host runs on {data_dir}: nothing to stop", 0)
    try:
        pid = _ask(sock)
    except (OSError, ValueError, KeyError) as exc:
        return Stopped(f"the memory host on {data_dir} did not take the request to stop: {exc}", 1)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if lock.is_free(data_dir):
            return Stopped(f"stopped the memory host on {data_dir} (pid {pid})", 0)
        holder = lock.holder_pid(data_dir)
        if holder is not None and holder != pid:
            return Stopped(
                f"stopped the memory host on {data_dir} (pid {pid}); pid {holder} took it over: a server "
                "still runs on this data dir (stop its client, or run hybrid-memory stop again)",
                0,
            )
        time.sleep(RETRY_S)
    return Stopped(
        f"the memory host on {data_dir} (pid {pid}) still holds the store after {timeout_s:g} s; "
        f"see {data_dir / HOST_LOG}, or end it with: kill {pid}",
        1,
    )


def _ask(sock: socket.socket) -> int:
    """The host's pid, from its answer to the request to stop."""
    with sock, sock.makefile("rb") as incoming:
        sock.sendall(line({"jsonrpc": "2.0", "id": 1, "method": STOP}))
        answer = json.loads(incoming.readline())
    return int(answer["result"]["pid"])
