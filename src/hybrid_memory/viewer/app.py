"""The viewer's HTTP routes: ``GET /viewer`` (the page) and ``GET /viewer/api/...`` (JSON), nothing else.

The page is the same static file for everyone and holds no memory: a browser cannot send a
bearer header when it navigates, so the page reads the token from its URL's fragment (never
sent to any server) and sends it with each data request, which the server's guard checks
like any other. Every answer carries a Content Security Policy that lets only the page's own
inline script and style run and lets it connect only to this server.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from hybrid_memory.errors import BackendUnavailableError, HybridMemoryError, InvalidInputError, NotFoundError
from hybrid_memory.server.http import Pages
from hybrid_memory.viewer.page import PAGE, POLICY
from hybrid_memory.viewer.source import ViewerSource

logger = logging.getLogger(__name__)

PAGE_PATH = "/viewer"
API = "/viewer/api"
HEADERS = {
    "content-security-policy": POLICY,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
MAX_LIMIT = 200


def _int(request: Request, name: str, default: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or not 0 <= int(raw) <= high:
        raise InvalidInputError(f"'{name}' must be a whole number from 0 to {high}, not {raw[:20]!r}.")
    return int(raw)


def _text(request: Request, name: str) -> str:
    value = request.query_params.get(name, "").strip()
    if not value:
        raise InvalidInputError(f"'{name}' is required: /viewer/api/...?{name}=...")
    return value


def _status(exc: Exception) -> int:
    if isinstance(exc, NotFoundError):
        return 404
    if isinstance(exc, InvalidInputError | ValidationError):
        return 400
    if isinstance(exc, BackendUnavailableError):
        return 503
    return 500


def _api(read: Callable[[Request], Awaitable[dict[str, Any]]]) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        try:
            body = await read(request)
        except (HybridMemoryError, ValidationError) as exc:
            status = _status(exc)
            if status == 500:
                logger.warning("viewer request %s failed: %s", request.url.path, exc)
            message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
            return JSONResponse({"error": message}, status_code=status, headers=HEADERS)
        return JSONResponse(body, headers=HEADERS)

    return endpoint


def viewer_routes(source: ViewerSource) -> list[Route]:
    """The page and its read-only JSON API, all GET (Starlette answers 405 to any other method)."""

    async def page(_: Request) -> Response:
        return HTMLResponse(PAGE, headers=HEADERS)

    def project(request: Request) -> str | None:
        return request.query_params.get("project") or None

    async def projects(_: Request) -> dict[str, Any]:
        return await source.projects()

    async def threads(request: Request) -> dict[str, Any]:
        limit = _int(request, "limit", 100, MAX_LIMIT) or 1
        return await source.threads(project(request), _int(request, "offset", 0, 10**9), limit)

    async def thread(request: Request) -> dict[str, Any]:
        return await source.thread(project(request), _text(request, "id"))

    async def graph(request: Request) -> dict[str, Any]:
        return await source.graph(project(request))

    async def recall(request: Request) -> dict[str, Any]:
        limit = _int(request, "limit", 10, 50) or 1
        return await source.recall(project(request), _text(request, "q"), limit)

    async def recent(request: Request) -> dict[str, Any]:
        return await source.recent(project(request), _int(request, "limit", 50, MAX_LIMIT) or 1)

    reads = {"projects": projects, "threads": threads, "thread": thread, "graph": graph}
    reads |= {"recall": recall, "recent": recent}
    return [
        Route(PAGE_PATH, page, methods=["GET"]),
        *(Route(f"{API}/{name}", _api(read), methods=["GET"]) for name, read in reads.items()),
    ]


def http_pages() -> Pages:
    """The viewer as the HTTP server serves it beside ``/mcp``, reading that server's open stores."""
    return Pages(
        name="memory viewer (read-only)",
        path=PAGE_PATH,
        routes=lambda running: viewer_routes(ViewerSource(running)),
        public=frozenset({PAGE_PATH}),
    )
