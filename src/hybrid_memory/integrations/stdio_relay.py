"""``hybrid-memory serve --detached-host`` on its fast path: a stdio client relayed to the host, stdlib only.

The plugin's MCP server never hosts the store itself (a headless host does, and outlives
the session), so it needs none of the server's stack: this relay starts in the time
Python starts, where importing the MCP SDK and the server took a second or more before
Claude Code got its first answer. It keeps the guarantees of
:mod:`hybrid_memory.server.relay`: the client's handshake and unanswered requests are
replayed to the next host when the connection ends, and answers still in flight when
the client closes its side are delivered (within :data:`DRAIN_S`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import IO, Any

from hybrid_memory.integrations.host_client import HostError, open_socket

DRAIN_S = 30.0
"""As in :mod:`hybrid_memory.server.relay`: how long answers in flight are awaited once the client left."""
JOIN_TIMEOUT_S = 60.0
_REPLAY_ID_PREFIX = "hybrid-memory-rejoin-"


class StdioRelay:
    def __init__(self, data_dir: Path, client_in: IO[bytes], client_out: IO[bytes]) -> None:
        self._data_dir = data_dir
        self._in = client_in
        self._out = client_out
        self._lock = threading.Condition()
        self._handshake: list[dict[str, Any]] = []
        self._pending: dict[Any, bytes] = {}
        self._replays = 0
        self._client_gone = False
        self._sock = open_socket(data_dir, JOIN_TIMEOUT_S)

    def run(self) -> None:
        threading.Thread(target=self._from_host, name="from-host", daemon=True).start()
        for line in self._in:
            self._from_client(line)
        with self._lock:
            self._client_gone = True
            deadline = time.monotonic() + DRAIN_S
            while self._pending and time.monotonic() < deadline:
                self._lock.wait(deadline - time.monotonic())
        self._sock.close()

    def _from_client(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            print("hybrid-memory: dropped a malformed message from the client", file=sys.stderr)
            return
        data = line.rstrip(b"\r\n") + b"\n"
        with self._lock:
            if isinstance(message, dict) and "method" in message:
                if "id" in message:
                    self._pending[message["id"]] = data
                if message["method"] in ("initialize", "notifications/initialized"):
                    self._handshake.append(message)
            sock = self._sock
        with contextlib.suppress(OSError):  # a request stays pending: re-sent to the next host
            sock.sendall(data)

    def _from_host(self) -> None:
        buffer = b""
        while True:
            try:
                chunk = self._sock.recv(1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                if not self._rejoin():
                    return
                buffer = b""
                continue
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                self._to_client(line)

    def _to_client(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        answer_id = message.get("id") if isinstance(message, dict) and "method" not in message else None
        if isinstance(answer_id, str) and answer_id.startswith(_REPLAY_ID_PREFIX):
            return  # the host's answer to a replayed handshake: the client has its own already
        self._out.write(line + b"\n")
        self._out.flush()
        if answer_id is not None:
            with self._lock:
                self._pending.pop(answer_id, None)
                self._lock.notify_all()

    def _rejoin(self) -> bool:
        """Connect to the next host and replay; False when the client has left and nothing is pending."""
        with self._lock:
            if self._client_gone and not self._pending:
                return False
            print("hybrid-memory: the shared memory server went away; joining the next one", file=sys.stderr)
            try:
                self._sock = open_socket(self._data_dir, JOIN_TIMEOUT_S)
            except HostError as exc:
                print(f"hybrid-memory: {exc}", file=sys.stderr)
                self._client_gone = True
                self._pending.clear()
                self._lock.notify_all()
                return False
            try:
                for message in self._handshake:
                    if "id" in message:
                        self._replays += 1
                        message = {**message, "id": f"{_REPLAY_ID_PREFIX}{self._replays}"}
                    self._sock.sendall(json.dumps(message, separators=(",", ":")).encode() + b"\n")
                for data in list(self._pending.values()):
                    self._sock.sendall(data)
            except OSError:
                pass  # that host went too: the next read fails and joins the one after
            return True


def serve_relay(data_dir: Path) -> int:
    """Relay this process's stdio to the data dir's host (started detached when none runs) until EOF."""
    # Told to stop (Claude Code sends SIGINT, then SIGTERM 0.1 s later): nothing to save, every
    # answer already went out, so go at once instead of unwinding the blocked reads.
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: os._exit(0))
    try:
        relay = StdioRelay(data_dir, sys.stdin.buffer, sys.stdout.buffer)
    except HostError as exc:
        print(f"hybrid-memory: {exc}", file=sys.stderr)
        return 1
    relay.run()
    return 0
