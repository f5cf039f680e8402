"""The command's side: run in the server that holds the store, or hold the store and run here.

Joining needs only the standard library and the wire format, so a command that a running
server answers never imports the stores, the model or ``mcp``.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from hybrid_memory import hostlock
from hybrid_memory.commands import wire

JOIN_TIMEOUT_S = 60.0
"""How long a command waits for a server that holds the lock to start answering on its socket."""
_RETRY_S = 0.05


class HostLeft(Exception):
    """The server closed the connection before it answered (it stopped, or was killed)."""


def join_or_hold(data_dir: Path, command: str) -> socket.socket | int:
    """A connection to the data dir's host, or the host lock (a descriptor) when there is no host.

    Waits while a server that holds the lock opens its stores (bounded) and while another
    command holds it (as long as that command runs).
    """
    data_dir.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + JOIN_TIMEOUT_S
    told = False
    while True:
        sock = hostlock.connect(data_dir)
        if sock is not None:
            return sock
        fd = hostlock.try_lock(data_dir, hostlock.COMMAND, command)
        if fd is not None:
            return fd
        other = hostlock.command_holding(data_dir)
        if other is not None:
            deadline = time.monotonic() + JOIN_TIMEOUT_S
            if not told:
                print(f"hybrid-memory: waiting for {other} to finish with the store", file=sys.stderr)
                told = True
        elif not hostlock.socket_fits(data_dir):
            from hybrid_memory.errors import StoreLockedError

            raise StoreLockedError(
                f"A hybrid-memory server holds the store in {data_dir}, whose path is too long for a "
                "socket to join it by; stop the server, or set HYBRID_MEMORY_DATA_DIR to a shorter path."
            )
        elif time.monotonic() > deadline:
            from hybrid_memory.errors import StoreLockedError

            raise StoreLockedError(
                f"Another hybrid-memory server holds {data_dir / hostlock.HOST_LOCK_NAME} but has not "
                f"answered on {hostlock.socket_path(data_dir)} for {JOIN_TIMEOUT_S:g} s; stop it, or "
                "pass --data-dir (HYBRID_MEMORY_DATA_DIR) for another store."
            )
        time.sleep(_RETRY_S)


def call(sock: socket.socket, command: str, scope: dict[str, str | None], args: dict[str, Any]) -> wire.Reply:
    """Run ``command`` in the host; its stderr is relayed here as it comes. Raises HostLeft."""
    with sock, sock.makefile("rb") as incoming:
        sock.sendall(wire.request(command, scope, args, tty=sys.stderr.isatty()))
        for raw in incoming:
            message = json.loads(raw)
            if message.get("method") == wire.STDERR:
                sys.stderr.write(message["params"]["text"])
                sys.stderr.flush()
                continue
            if "error" in message:
                error = message["error"]
                print(f"hybrid-memory: {error['message']}", file=sys.stderr)
                return wire.Reply("", int(error.get("data", {}).get("exit", 1)))
            result = message["result"]
            return wire.Reply(result["stdout"], int(result["code"]))
    raise HostLeft


def release(fd: int) -> None:
    os.close(fd)
