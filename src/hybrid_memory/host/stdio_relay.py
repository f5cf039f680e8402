"""``hybrid-memory serve --detached-host`` on its fast path: a stdio client relayed to the host, stdlib only.

The plugin's MCP server never hosts the store itself (a headless host does, and outlives
the session), so it needs none of the server's stack: this relay starts in the time
Python starts, where importing the MCP SDK and the server took a second or more before
Claude Code got its first answer. It drives the relay's state (:mod:`.relay`) with two
threads: the client's handshake and unanswered requests are replayed to the next host
when the connection ends, and answers still in flight when the client closes its side
are delivered (within :data:`~hybrid_memory.host.wire.DRAIN_S`).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import IO

from hybrid_memory.host.client import HostError, open_socket
from hybrid_memory.host.relay import RelayState
from hybrid_memory.host.wire import DRAIN_S, JOIN_TIMEOUT_S


class ThreadedRelay:
    """The client's lines to the host from the calling thread, the host's to the client from another."""

    def __init__(self, data_dir: Path, client_in: IO[bytes], client_out: IO[bytes]) -> None:
        self._data_dir = data_dir
        self._in = client_in
        self._out = client_out
        self._lock = threading.Condition()
        # The project this server is configured with, read as the settings read it (no settings here).
        self._state = RelayState(os.environ.get("HYBRID_MEMORY_PROJECT", "").strip() or None)
        self._sock = open_socket(data_dir, JOIN_TIMEOUT_S)

    def run(self) -> None:
        threading.Thread(target=self._from_host, name="from-host", daemon=True).start()
        for line in self._in:
            self._from_client(line)
        with self._lock:
            self._state.client_gone = True
            deadline = time.monotonic() + DRAIN_S
            while self._state.pending and time.monotonic() < deadline:
                self._lock.wait(deadline - time.monotonic())
        self._sock.close()

    def _from_client(self, line: bytes) -> None:
        with self._lock:
            data = self._state.to_host(line)
            sock = self._sock
        if data is None:
            print("hybrid-memory: dropped a malformed message from the client", file=sys.stderr)
            return
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
        with self._lock:
            out = self._state.to_client(line)
        if out is None:
            return
        self._out.write(out.line)
        self._out.flush()
        with self._lock:
            self._state.delivered(out.answers)
            self._lock.notify_all()

    def _rejoin(self) -> bool:
        """Connect to the next host and replay; False when the client has left and nothing is pending."""
        with self._lock:
            if self._state.done:
                return False
            print("hybrid-memory: the shared memory server went away; joining the next one", file=sys.stderr)
            try:
                self._sock = open_socket(self._data_dir, JOIN_TIMEOUT_S)
            except HostError as exc:
                print(f"hybrid-memory: {exc}", file=sys.stderr)
                self._state.abandon()
                self._lock.notify_all()
                return False
            try:
                for data in self._state.replay():
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
        relay = ThreadedRelay(data_dir, sys.stdin.buffer, sys.stdout.buffer)
    except HostError as exc:
        print(f"hybrid-memory: {exc}", file=sys.stderr)
        return 1
    relay.run()
    return 0
