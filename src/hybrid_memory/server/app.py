"""Build the MCP server: one ``MemoryService`` per process, opened and closed by the lifespan."""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools.tool_manager import ToolManager
from mcp_types import CallToolResult, InputRequiredResult
from mcp_types import Tool as MCPTool
from pydantic import AnyUrl

from hybrid_memory import __version__
from hybrid_memory.models import Scope
from hybrid_memory.server.opening import StoreOpening, open_service
from hybrid_memory.settings import Settings
from hybrid_memory.tools._guard import guard_tool_calls, refuse_unknown_arguments
from hybrid_memory.tools.app import AppContext
from hybrid_memory.tools.prompts import register_prompts
from hybrid_memory.tools.protocol import install_protocol_features
from hybrid_memory.tools.resources import CORE_URI, register_resources, session_core_memory

if TYPE_CHECKING:
    from hybrid_memory.embeddings.base import Embedder
    from hybrid_memory.tools.registry import ToolSet

logger = logging.getLogger(__name__)

OPEN_WITHIN_S = 1.0
"""A server whose stores did not start opening before it was built opens them once the handshake is over,
or this long after start."""
FAILED_WITHIN_S = 10.0
"""Stores that could not open stop the server once a client has asked for them, or this long after start."""

INSTRUCTIONS = """\
Long-term memory across conversations. Call recall_memory before answering anything that may depend
on earlier sessions (the user's preferences, decisions, facts, past work). Call remember_thread at the
end of a conversation (or every few turns) with its user and assistant messages. Distil durable knowledge
into typed notes with create_note and connect them with create_link; get_linked_notes walks from a note
to what is known around it. forget deletes a memory, a note, or a whole thread."""


@asynccontextmanager
async def open_app(
    settings: Settings, embedder: Embedder | None = None, *, warm_up: bool = True
) -> AsyncIterator[AppContext]:
    """Open both stores (and the embedder unless one is given), repair half-done writes, close on exit.

    Yields once everything is open: what command-line tools want. The server uses
    :func:`serving_app`, which answers the handshake first. ``warm_up=False`` leaves
    the model unloaded until something embeds (commands that only read never do).
    """
    app = _new_app(settings)
    async with open_service(settings, embedder, warm_up=warm_up) as service:
        app.attach(service)
        yield app


@asynccontextmanager
async def serving_app(
    settings: Settings,
    embedder: Embedder | None = None,
    *,
    on_open: Callable[[], None] | None = None,
    opening: StoreOpening | None = None,
    imported: Callable[[], Awaitable[None]] | None = None,
) -> AsyncIterator[AppContext]:
    """The server's lifespan: yields at once, so the handshake never waits on the stores.

    The stores open in the background once the handshake is over, or :data:`OPEN_WITHIN_S`
    after start, and the model loads once they are open (or they are opening already:
    ``opening``, started before the server's imports, which this takes over and closes).
    Requests that need the stores wait until they are open (the protocol middleware awaits
    :meth:`AppContext.ready`). A store that cannot open (locked by another process, a path
    taken by a file) stops the server with that error, whether or not a client has
    connected. ``on_open`` runs once they are open.
    """
    app = _new_app(settings)

    async def attach(opening: StoreOpening, *, taken_over: bool) -> None:
        try:
            app.attach(await opening.service())
        except Exception as exc:
            app.fail(exc)
            if taken_over:  # not before a client has asked (or FAILED_WITHIN_S has passed): it is told why
                await app.wanted(FAILED_WITHIN_S)
                raise

    async with anyio.create_task_group() as tg:
        taken_over = opening is not None
        if opening is None:
            # Opened once the handshake is over, or OPEN_WITHIN_S after start: a store that cannot open
            # stops this server after its first client has been told why.
            opening = StoreOpening(settings, embedder, on_open)
            tg.start_soon(opening.run, partial(_after, app.wanted, OPEN_WITHIN_S, imported))
        tg.start_soon(partial(attach, opening, taken_over=taken_over))
        try:
            yield app
        finally:
            # Not cancelled: the stores open (or fail loudly, e.g. locked by another process), then close.
            app.want()
            await opening.close()


async def _after(
    wanted: Callable[[float], Awaitable[object]],
    within_s: float,
    imported: Callable[[], Awaitable[None]] | None,
) -> None:
    """What a server's own opening waits for: a client's wish (or ``within_s``), then its imports done."""
    await wanted(within_s)
    if imported is not None:
        await imported()


def _new_app(settings: Settings) -> AppContext:
    scope = Scope(project=settings.project or "default", user=settings.user)
    return AppContext(scope, project_from_roots=settings.project is None)


class _MemoryServer(MCPServer[AppContext]):
    """Builds its tools on first use: their schemas cost more than the rest of the start-up,
    and the handshake does not need them (the tools capability is there either way)."""

    def __init__(self, *args: Any, tool_set: ToolSet, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tool_set: ToolSet = tool_set
        self._tools_built = False
        self._tools_lock = threading.Lock()
        self._importing: threading.Event | None = None
        self.running: Callable[[], Awaitable[AppContext]] | None = None
        """Waits until the stores are open (set by :func:`build_server`)."""

    def build_tools_in_background(self) -> None:
        """Build the tools on a thread of their own now, while the stores open (their wait is mostly
        the disk's); the first request that needs them waits for that build instead of starting one."""
        if self._importing is None:
            self._importing = threading.Event()
            threading.Thread(target=self._ensure_tools, name="tool-schemas", daemon=True).start()

    async def imported(self) -> None:
        """Returns once the tools' modules (most of the package) are imported, on their thread (started here
        if it was not).

        The stores' opening waits for it: Python 3.11 can raise a false ``_DeadlockError`` when one
        thread imports a package while another imports a module of it (CPython gh-83065), and the
        opening imports the stores, the service and the model's modules.
        """
        self.build_tools_in_background()
        importing = self._importing
        if importing is not None and not importing.is_set():
            await anyio.to_thread.run_sync(importing.wait, abandon_on_cancel=True)

    def _ensure_tools(self) -> None:
        try:
            if self._tools_built:
                return
            with self._tools_lock:
                if self._tools_built:
                    return
                from hybrid_memory.tools.registry import build_tools  # every tool: once the server runs

                self._imported()
                # The SDK takes finished tools only in its constructor; their lean schemas are set there.
                self._tool_manager = ToolManager(tools=build_tools(self._tool_set))
                self._tools_built = True
        finally:
            self._imported()  # however it ended: nothing waits for ever

    def _imported(self) -> None:
        if self._importing is not None:
            self._importing.set()

    async def list_tools(self) -> list[MCPTool]:
        self._ensure_tools()
        return await super().list_tools()

    async def call_tool(
        self, name: str, arguments: dict[str, Any], context: Context[AppContext, Any] | None = None
    ) -> CallToolResult | InputRequiredResult:
        self._ensure_tools()
        tool = self._tool_manager.get_tool(name)
        if tool is not None:
            refuse_unknown_arguments(name, arguments, tool.parameters)
        return await super().call_tool(name, arguments, context)

    async def read_resource(
        self, uri: AnyUrl | str, context: Context[AppContext, Any] | None = None
    ) -> Iterable[ReadResourceContents] | InputRequiredResult:
        # The SDK hands a static resource no context, and core memory is the session's project's.
        if str(uri) == CORE_URI and context is not None:
            text = await session_core_memory(context)
            if isinstance(text, InputRequiredResult):
                return text
            return [ReadResourceContents(content=text, mime_type="text/plain")]
        return await super().read_resource(uri, context)

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        self._ensure_tools()
        return super()._tool_input_schema(name)


def build_server(
    settings: Settings,
    embedder: Embedder | None = None,
    *,
    on_open: Callable[[], None] | None = None,
    opening: StoreOpening | None = None,
) -> MCPServer[AppContext]:
    """The MCP server with every tool, resource and prompt; nothing is opened until a transport runs it.

    ``embedder`` lets several servers share one loaded model (tests, benchmarks); the
    server then leaves closing it to the caller. ``on_open`` runs each time the stores
    have opened (``serve`` settles the heap then). ``opening``: stores that started opening
    before this server was built (its host lock taken already); its first lifespan takes
    them over, and closes them when it ends.
    """

    opened: list[AppContext] = []
    early = [opening] if opening is not None else []

    @asynccontextmanager
    async def lifespan(_: MCPServer[AppContext]) -> AsyncIterator[AppContext]:
        server.build_tools_in_background()
        taken = early.pop() if early else None
        async with serving_app(
            settings, embedder, on_open=on_open, opening=taken, imported=server.imported
        ) as app:
            opened.append(app)
            try:
                yield app
            finally:
                opened.remove(app)

    async def running() -> AppContext:
        if not opened:
            raise RuntimeError("the server is not running")
        await opened[-1].ready()
        return opened[-1]

    server = _MemoryServer(
        "hybrid-memory",
        title="Hybrid memory",
        instructions=INSTRUCTIONS,
        version=__version__,
        lifespan=lifespan,
        log_level=settings.log_level,
        middleware=[guard_tool_calls],
        tool_set=settings.tools,
    )
    server.running = running
    register_resources(server, running)
    register_prompts(server)
    install_protocol_features(server)
    return server
