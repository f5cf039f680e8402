"""The command's side: run in the server that holds the store, or hold the store and run here.

Joining needs only the standard library and the wire format, so a command that a running
server answers never imports the stores, the model or ``mcp``.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

from hybrid_memory.host import lock, wire
from hybrid_memory.host.start import attempts, wait


class HostLeft(Exception):
    """The server closed the connection before it answered (it stopped, or was killed)."""


def join_or_hold(data_dir: Path, command: str) -> socket.socket | int:
    """A connection to the data dir's host, or the host lock (a descriptor) when there is no host.

    Waits while a server that holds the lock opens its stores (bounded) and while another
    command holds it (as long as that command runs).
    """
    from hybrid_memory.errors import StoreLockedError

    def fail(reason: str) -> StoreLockedError:
        return StoreLockedError(
            f"{reason}; stop it, or pass --data-dir (HYBRID_MEMORY_DATA_DIR) for another store "
            "(a shorter path when it is too long)."
        )

    def waiting_for(other: str) -> None:
        print(f"hybrid-memory: waiting for {other} to finish with the store", file=sys.stderr)

    data_dir.mkdir(parents=True, exist_ok=True)
    return wait(attempts(data_dir, fail, holder=lock.COMMAND, what=command, waiting_for=waiting_for))


def call(sock: socket.socket, command: str, scope: dict[str, str | None], args: dict[str, Any]) -> wire.Reply:
    """Run ``command`` in the host; its stderr is relayed here as it comes. Raises HostLeft when the
    host goes before it answers (it stopped, or was killed: the connection ends or is reset)."""
    try:
        with sock, sock.makefile("rb") as incoming:
            sock.sendall(wire.request(command, scope, args, tty=sys.stderr.isatty()))
            for raw in incoming:
                if not raw.endswith(b"\n"):
                    break  # cut off mid-line: the host died while it wrote
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
    except OSError as exc:  # reset, broken pipe
        raise HostLeft from exc
    raise HostLeft


def release(fd: int) -> None:
    os.close(fd)
