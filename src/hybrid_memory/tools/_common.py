"""What every tool module shares: the app context, annotations, and error translation."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ParamSpec, TypeVar

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import ToolAnnotations

from hybrid_memory.errors import BackendError, HybridMemoryError

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


def app(ctx: Context[Any, Any]) -> AppContext:
    return ctx.request_context.lifespan_context  # type: ignore[no-any-return]


def tool_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Turn our errors into ``ToolError`` so their text reaches the model; the one place this happens."""

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except BackendError as exc:
            logger.warning("%s: %s", fn.__name__, exc)
            raise ToolError(str(exc) or type(exc).__name__) from exc
        except HybridMemoryError as exc:
            raise ToolError(str(exc) or type(exc).__name__) from exc

    return wrapper
