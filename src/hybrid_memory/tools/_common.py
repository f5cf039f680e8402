"""What every tool module shares: the session scope, times, and error translation."""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Annotated, Any, ParamSpec, TypeVar
from urllib.parse import unquote, urlparse

from mcp.server.mcpserver import AcceptedElicitation, ListRoots, Resolve
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import build_resolver_plans, find_resolved_parameters, resolve_arguments
from mcp_types import InputRequiredResult, ListRootsResult
from pydantic import Field

from hybrid_memory.errors import BackendError, HybridMemoryError
from hybrid_memory.models import Scope
from hybrid_memory.projects import PROJECT_META, legacy_project_name, project_name
from hybrid_memory.tools._guard import bounded_error
from hybrid_memory.tools.app import AppCtx, app
from hybrid_memory.tools.budget import MAX_TOKENS, MIN_TOKENS

logger = logging.getLogger(__name__)

P = ParamSpec("P")
R = TypeVar("R")


def _relayed(ctx: AppCtx) -> tuple[bool, str | None]:
    """Whether a server that joined this host relays the session, and the project it is configured with.

    A joined server's client is scoped as that server would scope it, not as the host is configured.
    """
    meta: dict[str, Any] = dict(ctx.request_context.meta or {})
    if PROJECT_META not in meta:
        return False, None
    named = meta[PROJECT_META]
    return True, named.strip() if isinstance(named, str) and named.strip() else None


def _from_roots(ctx: AppCtx) -> bool:
    relayed, named = _relayed(ctx)
    return named is None if relayed else app(ctx).project_from_roots


async def _ask_roots(ctx: AppCtx) -> ListRoots | None:
    """Ask the client for its roots only when they decide the project and it can answer."""
    if not _from_roots(ctx):
        return None
    capabilities = ctx.client_capabilities
    return ListRoots() if capabilities is not None and capabilities.roots is not None else None


def project_from_roots(roots: ListRootsResult | None) -> str | None:
    """The project of the first root (its repository, else its directory); None without a usable root.

    The hooks and the CLI name a project from their directory alike (:mod:`hybrid_memory.projects`).
    """
    if roots is None or not roots.roots:
        return None
    root = roots.roots[0]
    return project_name(str(root.uri), root.name)


def root_directory(roots: ListRootsResult | None) -> Path | None:
    """The directory of the first root, when it is a ``file:`` URI."""
    if roots is None or not roots.roots:
        return None
    uri = urlparse(str(roots.roots[0].uri))
    return Path(unquote(uri.path)) if uri.scheme == "file" and uri.path else None


async def _session_scope(ctx: AppCtx, roots: Annotated[ListRootsResult | None, Resolve(_ask_roots)]) -> Scope:
    """HYBRID_MEMORY_PROJECT, else the client's first MCP root's project, else ``default``.

    The first call for a project moves what its old name (the root's folder name) still holds.
    """
    configured = app(ctx).scope
    relayed, named = _relayed(ctx)
    if named is not None:
        return configured.model_copy(update={"project": named})
    project = project_from_roots(roots) if _from_roots(ctx) else None
    if project is None:
        return configured.model_copy(update={"project": "default"}) if relayed else configured
    scope = configured.model_copy(update={"project": project})
    root = roots.roots[0] if roots is not None and roots.roots else None
    if root is not None:
        await app(ctx).adopt(legacy_project_name(str(root.uri), root.name), scope)
    return scope


async def _session_root(roots: Annotated[ListRootsResult | None, Resolve(_ask_roots)]) -> Path | None:
    return root_directory(roots)


SessionScope = Annotated[Scope, Resolve(_session_scope)]
"""A tool parameter filled by the server, never by the model: the caller's scope."""
SessionRoot = Annotated[Path | None, Resolve(_session_root)]
"""The caller's directory (its first MCP root), when it gives one: where its code is."""


async def _scoped(scope: SessionScope) -> None:
    """The signature :func:`session_scope` resolves: one ``SessionScope`` parameter."""


@functools.cache
def _scope_plan() -> tuple[Any, Any]:
    resolved = find_resolved_parameters(_scoped)
    return resolved, build_resolver_plans(resolved, set())


async def session_scope(ctx: AppCtx) -> Scope | InputRequiredResult:
    """The caller's scope for a resource or a prompt, resolved exactly as ``SessionScope`` is for a tool.

    The SDK fills ``Resolve`` parameters of tools only; this runs the same resolvers for the
    others. An ``InputRequiredResult`` (the client's roots, asked the 2026-07-28 way) is
    returned as is: the resource or prompt returns it, and the client asks again with them.
    """
    resolved, plans = _scope_plan()
    found = await resolve_arguments(resolved, plans, {}, ctx)
    if isinstance(found, InputRequiredResult):
        return found
    scope: Scope = found["scope"]
    return scope


RESOLVED_OUTCOME = AcceptedElicitation[Any]
"""Held so it is built once. The SDK wraps every resolver's value in ``AcceptedElicitation[Any]``,
and pydantic keeps parameterised classes only weakly: without a reference, the garbage collector
frees it between calls and each tool call rebuilt the class (about 0.4 ms a resolver, two a call)."""

MaxTokens = Annotated[int, Field(ge=MIN_TOKENS, le=MAX_TOKENS)]
"""The budget of an answer that carries stored text (see :mod:`hybrid_memory.tools.budget`)."""

RetentionDays = Annotated[float | None, Field(gt=0, le=36500)]
"""Delete it after this many days (the name says it: no description in the schema)."""
Importance = Annotated[float | None, Field(ge=0.0, le=1.0)]


def as_utc(value: datetime) -> datetime:
    """An aware UTC datetime; a time without offset is taken as UTC."""
    return (value if value.tzinfo else value.replace(tzinfo=UTC)).astimezone(UTC)


ERRORS_MAPPED = "maps_tool_errors"
"""The attribute :func:`tool_errors` sets on what it returns, so a test can see every tool has it."""


def tool_errors(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
    """Turn our errors into ``ToolError`` so their text reaches the model; the one place this happens.

    ``register_tools`` applies it to every tool; tools never apply it themselves.
    """

    @functools.wraps(fn)
    async def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return await fn(*args, **kwargs)
        except BackendError as exc:
            logger.warning("%s: %s", fn.__name__, bounded_error(str(exc)))
            raise ToolError(bounded_error(str(exc)) or type(exc).__name__) from exc
        except HybridMemoryError as exc:
            raise ToolError(bounded_error(str(exc)) or type(exc).__name__) from exc

    setattr(wrapper, ERRORS_MAPPED, True)
    return wrapper
