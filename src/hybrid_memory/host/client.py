"""The hooks' side of the running host over its Unix socket, for hooks that must answer fast.

The host (:mod:`hybrid_memory.host.serve`) serves MCP on ``serve.sock`` in the data dir,
newline-delimited JSON-RPC, one session per connection. :func:`ask` sends a single request
of its own (a hook's injection: one line out, one line back); :func:`connect` opens an MCP
session (capture's ``remember_thread``). Both with the standard library alone: importing
the MCP SDK, pydantic and the models would cost more than the whole call.

When no host runs, :func:`connect` starts one detached (``hybrid-memory serve --headless``,
which exits after an idle period) and waits for it within the caller's bound.
"""

from __future__ import annotations

import os
import time

from hybrid_memory import __version__
from hybrid_memory.host import jsonc, lock
from hybrid_memory.host.start import HOST_LOG, attempts, wait
from hybrid_memory.host.wire import line

TYPE_CHECKING = False
if TYPE_CHECKING:  # ``typing``, ``socket`` and ``pathlib`` are among the slowest of a prompt hook's imports
    import _socket
    import socket
    from pathlib import Path
    from typing import Any

    from hybrid_memory.host.lock import StrPath

PROTOCOL_VERSION = "2025-06-18"


class HostError(Exception):
    """The host could not be reached or refused a call; the message says which and why."""


class HostClient:
    """One MCP session with the host, its root the session's directory (so its project is the same)."""

    def __init__(self, sock: socket.socket, root: Path, timeout_s: float, log: StrPath | None = None) -> None:
        self._sock = sock
        self._closed = "the memory host closed the connection" + (f" (see {log})" if log else "")
        self._root = root
        self._timeout_s = timeout_s
        self._buffer = b""
        self._next_id = 0

    def close(self) -> None:
        _close(self._sock)

    def __enter__(self) -> HostClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def handshake(self) -> None:
        self._request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {"roots": {"listChanged": False}},
                "clientInfo": {"name": "hybrid-memory-hook", "version": __version__},
            },
        )
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call_tool(
        self, name: str, arguments: dict[str, Any], meta: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """The tool's structured result; :class:`HostError` with its text when the tool refused.

        ``meta``: the request's ``_meta``, for what the host reads beside the arguments a model sees.
        """
        params: dict[str, Any] = {"name": name, "arguments": arguments}
        if meta:
            params["_meta"] = meta
        result = self._request("tools/call", params)
        if result.get("isError"):
            texts = [c.get("text", "") for c in result.get("content", []) if isinstance(c, dict)]
            raise HostError(f"{name} failed: {' '.join(texts)[:300]}")
        structured = result.get("structuredContent")
        if not isinstance(structured, dict):
            raise HostError(f"{name} returned no structured content")
        return structured

    def _request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self._next_id += 1
        request_id = self._next_id
        self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        deadline = time.monotonic() + self._timeout_s
        while True:
            message = self._receive(deadline)
            if "method" in message:
                self._answer_server_request(message)
                continue
            if message.get("id") != request_id:
                continue
            if "error" in message:
                error = message["error"]
                raise HostError(f"{method} failed: {error.get('message', error)}")
            result = message.get("result")
            return result if isinstance(result, dict) else {}

    def _answer_server_request(self, message: dict[str, Any]) -> None:
        if "id" not in message:
            return  # a notification (logging, progress): nothing to answer
        if message["method"] == "roots/list":
            from hybrid_memory.projects import root_uri  # an MCP session's: a hook's injection needs none

            roots = [{"uri": root_uri(self._root)}]
            self._send({"jsonrpc": "2.0", "id": message["id"], "result": {"roots": roots}})
        else:  # sampling, elicitation: a hook has no model and no user to ask
            error = {"code": -32601, "message": f"{message['method']} is not supported by a hook"}
            self._send({"jsonrpc": "2.0", "id": message["id"], "error": error})

    def _send(self, message: dict[str, Any]) -> None:
        try:
            self._sock.sendall(line(message))
        except OSError as exc:
            raise HostError(f"{self._closed}: {exc}") from exc

    def _receive(self, deadline: float) -> dict[str, Any]:
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise HostError(f"the memory host did not answer within {self._timeout_s:g} s")
            self._sock.settimeout(remaining)
            try:
                chunk = self._sock.recv(1 << 16)
            except TimeoutError:
                continue
            except OSError as exc:
                raise HostError(f"{self._closed}: {exc}") from exc
            if not chunk:
                raise HostError(self._closed)
            self._buffer += chunk
        data, self._buffer = self._buffer.split(b"\n", 1)
        message = jsonc.loads(data)
        return message if isinstance(message, dict) else {}


class _Left(Exception):
    """The host closed the connection before it answered."""


def _answer(sock: _socket.socket, request: bytes, timeout_s: float) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    buffer = b""
    try:
        sock.sendall(request)
        while b"\n" not in buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise HostError(f"the memory host did not answer within {timeout_s:g} s")
            sock.settimeout(remaining)
            try:
                chunk = sock.recv(1 << 16)
            except TimeoutError:
                continue
            if not chunk:
                raise _Left
            buffer += chunk
    except OSError as exc:  # reset, broken pipe: the host died mid-call
        raise _Left from exc
    message = jsonc.loads(buffer.split(b"\n", 1)[0])
    if not isinstance(message, dict):
        raise HostError("the memory host answered with something other than a JSON object")
    if "error" in message:
        error = message["error"]
        raise HostError(str(error.get("message", error)) if isinstance(error, dict) else str(error))
    result = message.get("result")
    return result if isinstance(result, dict) else {}


def ask(
    data_dir: StrPath,
    request: bytes,
    *,
    timeout_s: float,
    start: bool = True,
    answer_within_s: float | None = None,
) -> dict[str, Any]:
    """The result of one ``request`` (a framed JSON-RPC line) to the data dir's host, started when none
    runs; :class:`HostError` with the host's one-line message when it refused. A host that left before
    answering (killed, stopping) is asked once more: the next host answers. ``timeout_s`` bounds the
    wait for a host and, unless ``answer_within_s`` is given, for its answer."""
    log = os.path.join(data_dir, HOST_LOG)
    logged = _size(log)
    for tries_left in (1, 0):
        # A session waits on this: no longer than its bound, even while a command holds the store.
        sock = _listening(data_dir) or open_socket(data_dir, timeout_s, start=start, patient=False)
        try:
            return _answer(sock, request, timeout_s if answer_within_s is None else answer_within_s)
        except _Left:
            if not tries_left:
                said = _last_word(log, logged)
                raise HostError(said or f"the memory host closed the connection twice (see {log})") from None
        finally:
            _close(sock)
    raise AssertionError("unreachable")


def _close(sock: _socket.socket) -> None:
    try:
        sock.close()
    except OSError:
        return


def _listening(data_dir: StrPath) -> _socket.socket | None:
    """A connection to the host listening on the data dir's socket, made with the C module alone
    (importing ``socket`` costs a prompt more than connecting); None when none answers at once, and
    :func:`open_socket` finds, starts or waits for one and says what went wrong."""
    import _socket

    if not lock.socket_fits(data_dir):
        return None
    sock = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        sock.connect(lock.socket_path(data_dir))
    except OSError:
        sock.close()
        return None
    return sock


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return 0


def _last_word(log: str, since: int) -> str | None:
    """The one line a host that could not serve wrote in its log after ``since`` (its size then)."""
    try:
        with open(log, "rb") as f:
            f.seek(since)
            tail = f.read(1 << 16).decode(errors="replace")
    except OSError:
        return None
    said = [
        line.removeprefix("hybrid-memory: ")
        for line in tail.splitlines()
        if line.startswith("hybrid-memory: ")
    ]
    return said[-1] if said else None


def open_socket(
    data_dir: StrPath, timeout_s: float, *, start: bool = True, patient: bool = True
) -> socket.socket:
    """A connection to the data dir's host within ``timeout_s``: started (detached) when none runs,
    or, with ``start=False``, waited for; and while a command holds the store, for as long as it
    does unless not ``patient``."""
    sock = wait(attempts(data_dir, HostError, start=start, timeout_s=timeout_s, patient=patient))
    assert not isinstance(sock, int)  # no holder: it never takes the lock
    return sock


def connect(data_dir: StrPath, root: Path, *, timeout_s: float, start: bool = True) -> HostClient:
    """An MCP session with the data dir's host (started when none runs), its root ``root``;
    ``timeout_s`` bounds the wait for the host and then each request."""
    sock = open_socket(data_dir, timeout_s, start=start)
    # Each request gets the whole bound: the first one after a host started waits for its stores.
    client = HostClient(sock, root, timeout_s, os.path.join(data_dir, HOST_LOG))
    try:
        client.handshake()
    except BaseException:
        client.close()
        raise
    return client
