"""What every tool module shares: the app context, annotations, and error translation."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar
from urllib.parse import unquote, urlparse

from mcp.server.mcpserver import Context, ListRoots, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ListRootsResult, ToolAnnotations

from hybrid_memory.errors import BackendError, HybridMemoryError
from hybrid_memory.models import Scope
from hybrid_memory.tools._guard import bounded_error

if TYPE_CHECKING:
    from hybrid_memory.server.app import AppContext

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")

READ_ONLY = ToolAnnotations(
    readOnlyHint=True, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
IDEMPOTENT_WRITE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=False, idempotentHint=True, openWorldHint=False
)
WRITE = ToolAnnotations(readOnlyHint=False, destructiveHint=False, idempotentHint=False, openWorldHint=False)
DESTRUCTIVE = ToolAnnotations(
    readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False
)


MAX_PROJECT_CHARS = 128


def app(ctx: Context[Any, Any]) -> AppContext:
    return ctx.request_context.lifespan_context  # type: ignore[no-any-return]


async def _ask_roots(ctx: Context[Any, Any]) -> ListRoots | None:
    """Ask the client for its roots only when they decide the project and it can answer."""
    if not app(ctx).project_from_roots:
        return None
    capabilities = ctx.client_capabilities
    return ListRoots() if capabilities is not None and capabilities.roots is not None else None


def project_from_roots(roots: ListRootsResult | None) -> str | None:
    """The first root's name, else the last segment of its path; None without a usable root."""
    if roots is None or not roots.roots:
        return None
    root = roots.roots[0]
    name = (root.name or "").strip()
    if not name:
        name = unquote(urlparse(str(root.uri)).path).rstrip("/").rsplit("/", 1)[-1].strip()
    return name[:MAX_PROJECT_CHARS] or None


async def _session_scope(
    ctx: Context[Any, Any], roots: Annotated[ListRootsResult | None, Resolve(_ask_roots)]
) -> Scope:
    """HYBRID_MEMORY_PROJECT, else the client's first MCP root, else ``default``."""
    configured = app(ctx).scope
    project = project_from_roots(roots) if app(ctx).project_from_roots else None
    return configured if project is None else configured.model_copy(update={"project": project})


SessionScope = Annotated[Scope, Resolve(_session_scope)]
"""A tool parameter filled by the server, never by the model: the caller's scope."""


def as_utc(value: datetime) -> datetime:
    """An aware UTC datetime; a time without offset is taken as UTC."""
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)


def tool_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Turn our errors into ``ToolError`` so their text reaches the model; the one place this happens."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except BackendError as exc:
            logger.warning("%s: %s", fn.__name__, bounded_error(str(exc)))
            raise ToolError(bounded_error(str(exc)) or type(exc).__name__) from exc
        except HybridMemoryError as exc:
            raise ToolError(bounded_error(str(exc)) or type(exc).__name__) from exc

    return wrapper
