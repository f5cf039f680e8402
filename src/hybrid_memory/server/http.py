"""Streamable HTTP: a bearer token, DNS-rebinding protection on every bind, clean start-up failures.

The SDK's app serves ``/mcp``, and the pages plugged in (:class:`Pages`: the memory viewer's
``/viewer``) beside it; :class:`Guard` sits in front of both and answers every HTTP request that
has a foreign ``Host``/``Origin`` (421/403) or lacks the token (401) before either sees it; only
the viewer's static page (no memory in it) is served without the token, which the page then
sends with each of its data requests.

No protected-resource metadata is served: the MCP authorization spec's document must name an
OAuth authorization server, and a static token has none; a client is given the token out of
band (``Authorization: Bearer ...``).
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import re
import signal
import socket
import threading
from collections.abc import Awaitable, Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.routing import BaseRoute
from starlette.types import ASGIApp, Receive, Scope, Send

from hybrid_memory.errors import AddressUnavailableError, ConfigurationError
from hybrid_memory.host.lock import SERVER, socket_fits, try_lock
from hybrid_memory.host.serve import Host
from hybrid_memory.settings import HttpSettings

logger = logging.getLogger(__name__)

REALM = "hybrid-memory"
BACKLOG = 128
_HAS_PORT = re.compile(r":(\d+|\*)$")


@dataclass(frozen=True)
class Pages:
    """Web pages served beside ``/mcp``, plugged in at start-up (the viewer's): the server imports none."""

    name: str
    """What they are, for the log line that says where: ``memory viewer (read-only)``."""
    path: str
    """Where they start: ``/viewer``."""
    routes: Callable[[Callable[[], Awaitable[Any]]], Sequence[BaseRoute]]
    """Their routes, given the call that waits for the open stores and returns the app context."""
    public: frozenset[str] = frozenset()
    """Paths a GET may read without the token: static pages that hold no memory."""


def check_http_settings(http: HttpSettings) -> None:
    """Refuse a configuration that would expose the memory: beyond loopback without a token."""
    if not http.loopback and http.bearer_token is None:
        raise ConfigurationError(
            f"--host {http.host} listens beyond this machine and needs a bearer token: set "
            "HYBRID_MEMORY_HTTP_TOKEN (or HYBRID_MEMORY_HTTP_TOKEN_FILE), or bind --host 127.0.0.1"
        )


def allowed_hosts(http: HttpSettings) -> list[str]:
    """Every Host header value the server answers: loopback names with the port, then the operator's."""
    own = ["127.0.0.1", "localhost", "[::1]"]
    if not http.loopback and http.host not in ("0.0.0.0", "::"):
        own.append(f"[{http.host}]" if ":" in http.host else http.host)
    return [f"{name}:{http.port}" for name in own] + _with_any_port(http.allowed_hosts)


def allowed_origins(http: HttpSettings) -> list[str]:
    """Every Origin header value accepted (a request without Origin is not from a browser page)."""
    own = [f"http://{name}:{http.port}" for name in ("127.0.0.1", "localhost", "[::1]")]
    return own + _with_any_port(http.allowed_origins)


def _with_any_port(entries: list[str]) -> list[str]:
    """An entry without a port also matches that name with any port (``name`` and ``name:*``)."""
    out: list[str] = []
    for entry in entries:
        out.append(entry)
        if not _HAS_PORT.search(entry):
            out.append(f"{entry}:*")
    return out


def transport_security(http: HttpSettings) -> TransportSecuritySettings:
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=allowed_hosts(http),
        allowed_origins=allowed_origins(http),
    )


class Guard:
    """ASGI middleware: rebinding check first (a browser page can never pass it), then the token."""

    def __init__(
        self,
        app: ASGIApp,
        security: TransportSecuritySettings,
        token: str | None,
        public: frozenset[str] = frozenset(),
        token_source: str = "<HYBRID_MEMORY_HTTP_TOKEN>",
    ) -> None:
        self._app = app
        self._token_source = token_source
        """What a client missing the token is told to send: where that token comes from."""
        self._security = TransportSecurityMiddleware(security)
        self._token = token.encode() if token is not None else None
        self._public = public
        """Paths a GET may read without the token: static pages that hold no memory."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        refused = await self._security.validate_request(Request(scope))
        if refused is not None:
            await refused(scope, receive, send)
            return
        if self._token is not None and not (scope["method"] == "GET" and scope["path"] in self._public):
            problem = self._check(Headers(scope=scope).get("authorization"))
            if problem is not None:
                await _unauthorized(problem, self._token_source, send)
                return
        await self._app(scope, receive, send)

    def _check(self, header: str | None) -> str | None:
        """None when the token matches, else what a client is told (RFC 6750 §3.1)."""
        assert self._token is not None
        scheme, _, given = (header or "").partition(" ")
        if not header or scheme.lower() != "bearer":
            return ""  # no credentials: the challenge carries no error code
        if hmac.compare_digest(given.strip().encode(), self._token):
            return None
        logger.warning("HTTP request with a wrong bearer token refused")
        return "invalid_token"


async def _unauthorized(error: str, token_source: str, send: Send) -> None:
    challenge = f'Bearer realm="{REALM}"'
    description = f"A bearer token is required: send Authorization: Bearer {token_source}."
    if error:
        description = "The bearer token is not valid."
        challenge += f', error="{error}", error_description="{description}"'
    body = json.dumps({"error": error or "unauthorized", "error_description": description}).encode()
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"www-authenticate", challenge.encode()),
    ]
    await send({"type": "http.response.start", "status": 401, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def bind(host: str, port: int) -> socket.socket:
    """The listening socket, taken before any store opens, so a busy port fails in a moment."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )[0]
        sock = socket.socket(family, kind, proto)
    except OSError as exc:
        raise AddressUnavailableError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from exc
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        # Listening now lets clients that connect while the stores open wait in the backlog.
        sock.listen(BACKLOG)
    except OSError as exc:
        sock.close()
        hint = (
            "; another server (hybrid-memory?) listens there: pick another --port" if exc.errno == 98 else ""
        )
        raise AddressUnavailableError(f"cannot listen on {host}:{port}: {exc.strerror or exc}{hint}") from exc
    return sock


class Uvicorn(uvicorn.Server):
    """Uvicorn re-raises SIGTERM/SIGINT once it has stopped; here the stores still have to close first."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        previous = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)


async def serve_http(
    http: HttpSettings, log_level: str, host: Host, *, embedded: bool = True, pages: Pages | None = None
) -> None:
    """Bind, open the stores (the app's lifespan), then serve until SIGINT/SIGTERM; close in order.

    The server (``host.server``) also hosts the store on the data dir's socket, as the first
    stdio server does: stdio servers, hooks and commands on that data dir join it. An
    ``embedded`` store can have one such host; with only server backends (Qdrant, Neo4j)
    a second server on the data dir serves HTTP without the socket.
    """
    check_http_settings(http)
    sock = bind(http.host, http.port)
    lock_fd = await host.take_lock() if embedded else try_lock(host.data_dir, SERVER)
    try:
        with sock:
            await _serve(http, log_level, sock, host, lock_fd is not None, pages)
    finally:
        if lock_fd is not None:
            os.close(lock_fd)  # last: the stores are closed by now


async def _serve(
    http: HttpSettings, log_level: str, sock: socket.socket, host: Host, hosting: bool, pages: Pages | None
) -> None:
    server = host.server
    security = transport_security(http)
    app = server.streamable_http_app(transport_security=security, host=http.host)
    running = getattr(server, "running", None)
    public: frozenset[str] = frozenset()
    if running is not None and pages is not None:  # our server (not a bare SDK one): pages read its stores
        app.router.routes.extend(pages.routes(running))
        public = pages.public
    token = http.bearer_token.get_secret_value() if http.bearer_token is not None else None
    guarded = Guard(app, security, token, public=public)
    # Our own logging (stderr) rather than uvicorn's dictConfig, whose access log goes to stdout.
    config = uvicorn.Config(guarded, lifespan="off", log_config=None, log_level=log_level.lower())
    async with app.router.lifespan_context(app), anyio.create_task_group() as tg:
        if running is not None:  # the stores open (or fail, in one line) before anyone is told we listen
            state = await running()
            if hosting and socket_fits(host.data_dir):
                tg.start_soon(host.serve, await host.listen(), state)
        logger.info(
            "listening on http://%s:%d/mcp (bearer token %s)",
            http.host,
            http.port,
            "required" if token else "off: loopback only",
        )
        if running is not None and pages is not None:
            logger.info("%s on http://%s:%d%s", pages.name, http.host, http.port, pages.path)
        await Uvicorn(config).serve(sockets=[sock])
        tg.cancel_scope.cancel()
