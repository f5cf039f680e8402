"""The application context every tool receives, owned here so the server depends on tools, not back."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.mcpserver import Context

from hybrid_memory.models import Scope

if TYPE_CHECKING:
    from hybrid_memory.service import MemoryService


class AppContext:
    """What every tool receives through ``ctx.request_context.lifespan_context``.

    The server answers the handshake before its stores are open: they open in the
    background from its start, the service is attached when they are, and every request
    that uses it waits for that first (:meth:`ready`; the protocol middleware calls it).
    Stores that could not open stop the server once a client has asked for them (see
    :meth:`want`), so that client is told why.
    """

    def __init__(self, scope: Scope, *, project_from_roots: bool = False) -> None:
        self.scope = scope
        """The configured scope; without HYBRID_MEMORY_PROJECT its project is ``default``."""
        self.project_from_roots = project_from_roots
        """No project configured: each session's project comes from the client's first MCP root."""
        self.adopted: set[tuple[str, str]] = set()
        """(old name, project) pairs whose move was done or found needless (see :meth:`adopt`)."""
        self._adopting = anyio.Lock()
        self._service: MemoryService | None = None
        self._failure: BaseException | None = None
        self._settled = anyio.Event()
        self._wanted = anyio.Event()

    @property
    def service(self) -> MemoryService:
        if self._service is None:
            raise RuntimeError("the memory service is not open yet; await AppContext.ready() first")
        return self._service

    def attach(self, service: MemoryService) -> None:
        """The stores are open: requests may use ``service`` from now on."""
        self._service = service
        self._settled.set()

    def fail(self, exc: BaseException) -> None:
        """The stores could not be opened: waiting requests fail with ``exc``."""
        self._failure = exc
        self._settled.set()

    def want(self) -> None:
        """The handshake is over, or something needs the stores."""
        self._wanted.set()

    async def wanted(self, within_s: float) -> None:
        """Return when :meth:`want` is called, or after ``within_s`` at the latest."""
        with anyio.move_on_after(within_s):
            await self._wanted.wait()

    async def adopt(self, legacy: str | None, scope: Scope) -> None:
        """Move what a project's old name (its folder's) still holds into ``scope``, once per process."""
        if legacy is None or legacy == scope.project or (legacy, scope.project) in self.adopted:
            return
        async with self._adopting:
            if (legacy, scope.project) in self.adopted:
                return
            await self.ready()
            await self.service.adopt(legacy, scope)
            self.adopted.add((legacy, scope.project))

    async def ready(self) -> None:
        """Return once the service is attached; raise what kept the stores from opening."""
        self._wanted.set()
        if not self._settled.is_set():  # settled: no checkpoint, so a failure is answered before the stop
            await self._settled.wait()
        if self._failure is not None:
            raise self._failure


AppCtx = Context[AppContext, Any]
"""A tool's ``ctx``: the SDK's context over our lifespan's AppContext (any request type)."""


def app(ctx: AppCtx) -> AppContext:
    return ctx.request_context.lifespan_context
