"""The protocol's own features around the tools: progress, client logging, clean prompt errors.

One server middleware does four things per request:

- ``tools/call``, ``resources/read`` and ``prompts/get`` wait until the stores are
  open; they start opening in the background when the handshake completes.
- ``tools/call`` with a progress token: the service's progress reports
  (:mod:`hybrid_memory.service.progress`) become ``notifications/progress``.
- ``logging/setLevel`` is kept per connection (a 2026-07-28 client asks per request
  in ``_meta`` instead); our log records at or above that level, emitted while the
  client's request runs, reach it as ``notifications/message`` (what the server
  logs at all is still set by ``HYBRID_MEMORY_LOG_LEVEL``).
- ``prompts/get`` for a prompt that does not exist, or with arguments it cannot
  take, answers ``invalid params`` (-32602) instead of an internal error with a traceback.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Final, get_args

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError
from mcp_types import INVALID_PARAMS, LOG_LEVEL_META_KEY, EmptyResult, LoggingLevel, SetLevelRequestParams

from hybrid_memory.service import progress
from hybrid_memory.tools.app import AppContext

LEVELS: Final[tuple[LoggingLevel, ...]] = get_args(LoggingLevel)
"""MCP's levels, least severe first."""
_PY_TO_MCP: Final[dict[int, LoggingLevel]] = {
    logging.DEBUG: "debug",
    logging.INFO: "info",
    logging.WARNING: "warning",
    logging.ERROR: "error",
    logging.CRITICAL: "critical",
}
NEEDS_STORES: Final = frozenset({"tools/call", "resources/read", "prompts/get"})
"""Requests that wait for the stores to open; the handshake and the listings do not."""
_LEVEL_KEY = "hybrid_memory.log_level"
_FORWARDED_LOGGER = "hybrid_memory"

_pending: ContextVar[tuple[LoggingLevel, list[logging.LogRecord]] | None] = ContextVar(
    "hybrid_memory_client_log", default=None
)


def _mcp_level(record: logging.LogRecord) -> LoggingLevel:
    at_or_below = [name for no, name in sorted(_PY_TO_MCP.items()) if record.levelno >= no]
    return at_or_below[-1] if at_or_below else "debug"


class _ClientLogHandler(logging.Handler):
    """Collects the records a request produced, for its client, when that client asked for logs."""

    def emit(self, record: logging.LogRecord) -> None:
        pending = _pending.get()
        if pending is not None and LEVELS.index(_mcp_level(record)) >= LEVELS.index(pending[0]):
            pending[1].append(record)


def _connection_state(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
    # mcp 2.3 keeps per-connection scratch state on the Connection, reachable only through the session.
    state: dict[str, Any] = ctx.session._connection.state
    return state


async def _set_level(ctx: ServerRequestContext[Any, Any], params: SetLevelRequestParams) -> EmptyResult:
    _connection_state(ctx)[_LEVEL_KEY] = params.level
    return EmptyResult()


@contextmanager
def _collecting(level: LoggingLevel | None) -> Iterator[list[logging.LogRecord]]:
    records: list[logging.LogRecord] = []
    token = _pending.set((level, records)) if level is not None else None
    try:
        yield records
    finally:
        if token is not None:
            _pending.reset(token)


async def _send(ctx: ServerRequestContext[Any, Any], record: logging.LogRecord) -> None:
    # Logging is deprecated from protocol 2026-07-28 on, but a client that asks for logs still gets them.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MCPDeprecationWarning)
        await ctx.session.send_log_message(
            _mcp_level(record), record.getMessage(), record.name, related_request_id=ctx.request_id
        )


class ProtocolMiddleware:
    """Progress and client logging for every request; prompt errors as invalid params."""

    def __init__(self, server: MCPServer[Any]) -> None:
        self._server = server

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method != "initialize" and isinstance(ctx.lifespan_context, AppContext):
            ctx.lifespan_context.want()  # past the handshake: stores that could not open stop the server
        if ctx.request_id is None or ctx.method in ("initialize", "logging/setLevel"):
            return await call_next(ctx)
        if ctx.method in NEEDS_STORES and isinstance(ctx.lifespan_context, AppContext):
            await ctx.lifespan_context.ready()
            with ctx.lifespan_context.service.in_use():
                return await self._handle(ctx, call_next)
        return await self._handle(ctx, call_next)

    async def _handle(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        # 2026-07-28 clients opt in per request in _meta; earlier ones once, with logging/setLevel.
        asked = (ctx.meta or {}).get(LOG_LEVEL_META_KEY)
        level: LoggingLevel | None = asked if asked in LEVELS else _connection_state(ctx).get(_LEVEL_KEY)
        with _collecting(level) as records, progress.reporting(ctx.session.report_progress):
            try:
                if ctx.method == "prompts/get":
                    return await self._get_prompt(ctx, call_next)
                return await call_next(ctx)
            finally:
                for record in records:
                    await _send(ctx, record)

    async def _get_prompt(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        name = (ctx.params or {}).get("name")
        known = [p.name for p in await self._server.list_prompts()]
        if name not in known:
            raise MCPError(
                code=INVALID_PARAMS, message=f"No prompt {name!r}. Prompts: {', '.join(known)}.", data=name
            )
        try:
            return await call_next(ctx)
        except ValueError as exc:  # the SDK's wrapping of a missing or bad argument
            raise MCPError(code=INVALID_PARAMS, message=str(exc), data=name) from exc


def install_protocol_features(server: MCPServer[Any]) -> None:
    """Add ``logging/setLevel`` and the middleware to ``server``; forward our log records to clients."""
    lowlevel = server._lowlevel_server  # the SDK offers no public way to add a spec method's handler
    lowlevel.add_request_handler("logging/setLevel", SetLevelRequestParams, _set_level)
    server.middleware.append(ProtocolMiddleware(server))
    forwarded = logging.getLogger(_FORWARDED_LOGGER)
    if not any(isinstance(h, _ClientLogHandler) for h in forwarded.handlers):
        forwarded.addHandler(_ClientLogHandler(logging.DEBUG))
