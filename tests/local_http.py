"""A real HTTP API on 127.0.0.1 for tests of clients of OpenAI-compatible servers.

No OpenAI server runs here, so tests serve the few endpoints they need themselves:
subclass :class:`JsonHandler` with a ``do_POST`` and run a :class:`LocalApiServer`
with :func:`serving`.
"""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar, TypeVar


class LocalApiServer(ThreadingHTTPServer):
    """Listens on a free port of 127.0.0.1 and records the requests its handler sees."""

    daemon_threads = True

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.requests: list[dict[str, Any]] = []

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}/v1"


class JsonHandler(BaseHTTPRequestHandler):
    """Answers with JSON; ``extra_headers`` go on every reply."""

    extra_headers: ClassVar[dict[str, str]] = {}

    def _reply(self, status: int, payload: dict[str, Any]) -> None:
        encoded = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(encoded)))
        for name, value in self.extra_headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(encoded)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the requests are recorded on the server instead."""


S = TypeVar("S", bound=LocalApiServer)


@contextmanager
def serving(server: S) -> Iterator[S]:
    """Serve in a thread while the block runs; shut down and close after it."""
    # A short poll interval makes shutdown() return at once instead of after half a second.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@contextmanager
def silent_url() -> Iterator[str]:
    """A port that accepts connections (the kernel's backlog) but never answers."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen(8)
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
