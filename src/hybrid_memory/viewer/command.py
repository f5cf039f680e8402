"""``hybrid-memory view``: the memory viewer on loopback, with a token of its own, for stdio users.

The memory is read where it is held: the command joins the data dir's host (the process
that owns the store for every stdio server) and relays the viewer's requests to the
viewer that host serves on ``view.sock``; with no host it becomes the host itself, as a
stdio ``serve`` would, so servers started meanwhile join it instead of failing. Either
way the store is never opened beside its owner. In front: the HTTP server's own guard
(Host/Origin checks, a bearer token made for this run), on 127.0.0.1 only.
"""

from __future__ import annotations

import logging
import secrets
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import uvicorn
from starlette.types import Receive, Scope, Send

from hybrid_memory.errors import BackendError, StoreLockedError
from hybrid_memory.exits import check_data_dir
from hybrid_memory.host.serve import Host
from hybrid_memory.host.wire import RETRY_S
from hybrid_memory.server.http import Guard, Uvicorn, bind, transport_security
from hybrid_memory.settings import HttpSettings, Settings
from hybrid_memory.viewer.app import HEADERS, PAGE_PATH
from hybrid_memory.viewer.hosted import VIEW_SOCKET_NAME

logger = logging.getLogger(__name__)

READY_WITHIN_S = 120.0
"""How long the host may take to open its stores (and its viewer socket) before we give up."""
VIEW_TOKEN = "<the token after #token= in the URL hybrid-memory view printed>"
"""This viewer's token is made for its run; the HTTP server's HYBRID_MEMORY_HTTP_TOKEN is not it."""
GONE = b'{"error": "The memory server this viewer read from is gone; run hybrid-memory view again."}'
_PASSED_ON = ("content-type", *HEADERS)


class ViewerProxy:
    """ASGI: each GET under /viewer, passed to the host's viewer on its Unix socket."""

    def __init__(self, view_socket: Path) -> None:
        self._client = httpx.AsyncClient(
            transport=httpx.AsyncHTTPTransport(uds=str(view_socket)), base_url="http://viewer", timeout=120
        )

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        if path != PAGE_PATH and not path.startswith(PAGE_PATH + "/"):
            await _answer(send, 404, b'{"error": "Not found: the viewer is at /viewer."}')
            return
        if scope["method"] != "GET":
            await _answer(send, 405, b'{"error": "The viewer is read-only: GET only."}')
            return
        query = scope["query_string"].decode("latin-1")
        try:
            upstream = await self._client.get(path + (f"?{query}" if query else ""))
        except httpx.TransportError:
            await _answer(send, 502, GONE)
            return
        headers = [(k, v) for k, v in upstream.headers.items() if k.lower() in _PASSED_ON]
        await _answer(send, upstream.status_code, upstream.content, headers)


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[str, str]] | None = None) -> None:
    fields = headers or [("content-type", "application/json"), *HEADERS.items()]
    raw = [(k.encode(), v.encode()) for k, v in fields] + [(b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


async def _wait_for_viewer(path: Path) -> None:
    deadline = time.monotonic() + READY_WITHIN_S
    while True:
        try:
            stream = await anyio.connect_unix(path)
        except OSError:
            if time.monotonic() > deadline:
                raise BackendError(
                    f"The hybrid-memory server holding this data dir serves no viewer on {path}; "
                    "it may be an older version: restart it, then run hybrid-memory view again."
                ) from None
            await anyio.sleep(RETRY_S)
        else:
            await stream.aclose()
            return


class _Announcing(Uvicorn):
    """Says where to look once it listens; stops on SIGINT/SIGTERM without re-raising them."""

    def __init__(self, config: uvicorn.Config, url: str) -> None:
        super().__init__(config)
        self._url = url

    async def startup(self, sockets: Any = None) -> None:
        await super().startup(sockets=sockets)
        # The command's one output: where to look (the token rides in the fragment, never sent).
        print(self._url, flush=True)
        print("memory viewer (read-only) running; Ctrl-C stops it", file=sys.stderr, flush=True)


async def run_view(settings: Settings, port: int, host: Host, first: str | None = None) -> None:
    """Serve the viewer on 127.0.0.1:``port`` (0: any free port) until interrupted; print its URL.

    With no host running, this process becomes ``host``, as a stdio ``serve`` would.
    ``first``: the project the page shows first (the directory's), else the configured one.
    """
    try:
        await _run_view(settings, port, host, first)
    except* StoreLockedError:
        # Another process holds the store without sharing it: an HTTP server, whose own /viewer is the way in.
        raise StoreLockedError(
            f"The memory store in {settings.data_dir} is held by a hybrid-memory process that does not "
            "share it (a server run with --transport http?): open that server's own "
            "http://<its host>:<its port>/viewer#token=<its token>, or stop it."
        ) from None


async def _run_view(settings: Settings, port: int, host: Host, first: str | None) -> None:
    check_data_dir(settings.data_dir)
    # One line per relayed request is noise on the terminal this runs in.
    logging.getLogger("httpx").setLevel(max(logging.WARNING, logging.root.level))
    sock = bind("127.0.0.1", port)
    with sock:
        # Loopback names only: the HTTP server's allow-lists and token (environment) are not this one's.
        http = HttpSettings(
            host="127.0.0.1", port=sock.getsockname()[1], token=None, allowed_hosts=[], allowed_origins=[]
        )
        token = secrets.token_urlsafe(32)
        async with anyio.create_task_group() as tg:
            connection = await host.join_or_host(tg)
            await connection.aclose()  # only to know a host runs: the viewer has its own socket
            await _wait_for_viewer(settings.data_dir / VIEW_SOCKET_NAME)
            proxy = ViewerProxy(settings.data_dir / VIEW_SOCKET_NAME)
            guard = Guard(
                proxy, transport_security(http), token, public=frozenset({PAGE_PATH}), token_source=VIEW_TOKEN
            )
            config = uvicorn.Config(guard, lifespan="off", log_config=None, log_level="warning")
            shown = first or settings.project
            project = f"?project={quote(shown, safe='')}" if shown else ""
            url = f"http://127.0.0.1:{http.port}{PAGE_PATH}{project}#token={token}"
            try:
                await _Announcing(config, url).serve(sockets=[sock])
            finally:
                with anyio.CancelScope(shield=True):
                    await proxy.aclose()
                tg.cancel_scope.cancel()  # and, when this process hosts the store, close it
