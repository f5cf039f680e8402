"""Build the MCP server: one ``MemoryService`` per process, opened and closed by the lifespan."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import anyio
from mcp.server.lowlevel.helper_types import ReadResourceContents
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.tools.tool_manager import ToolManager
from mcp_types import CallToolResult, InputRequiredResult
from mcp_types import Tool as MCPTool
from pydantic import AnyUrl

from hybrid_memory import __version__
from hybrid_memory.errors import BackendError, BackendUnavailableError
from hybrid_memory.models import Scope
from hybrid_memory.settings import Settings
from hybrid_memory.tools._guard import guard_tool_calls, refuse_unknown_arguments
from hybrid_memory.tools.app import AppContext
from hybrid_memory.tools.prompts import register_prompts
from hybrid_memory.tools.protocol import install_protocol_features
from hybrid_memory.tools.resources import CORE_URI, register_resources, session_core_memory

if TYPE_CHECKING:
    from hybrid_memory.embeddings.base import Embedder
    from hybrid_memory.service import MemoryService
    from hybrid_memory.tools.registry import ToolSet

logger = logging.getLogger(__name__)

OPEN_WITHIN_S = 1.0
"""The stores open once the handshake is over, or this long after start at the latest."""

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
    async with _open_service(settings, embedder, warm_up=warm_up) as service:
        app.attach(service)
        yield app


@asynccontextmanager
async def serving_app(
    settings: Settings, embedder: Embedder | None = None, *, on_open: Callable[[], None] | None = None
) -> AsyncIterator[AppContext]:
    """The server's lifespan: yields at once, so the handshake never waits on the stores.

    They open in the background once the handshake is over (the client's first message
    after ``initialize``), or :data:`OPEN_WITHIN_S` after start when no client speaks (an
    HTTP server waiting for its first request), so the handshake does not share the
    process with the imports and the opening; requests that need the stores wait until
    they are open (the protocol middleware awaits :meth:`AppContext.ready`). A store
    that cannot open (locked by another process, a path taken by a file) stops the
    server with that error, whether or not a client has connected. ``on_open`` runs once
    they are open.
    """
    app = _new_app(settings)
    stopping = anyio.Event()
    model: list[Embedder] = [] if embedder is None else [embedder]
    built = anyio.Event()

    not_built: list[Exception] = []

    async def load_model() -> None:
        # From the start, on a worker thread: the model is ready by the time the handshake is over.
        try:
            model.append(await anyio.to_thread.run_sync(_build_embedder, settings))
        except Exception as exc:  # e.g. OpenAI without a key: the stores' opening reports it
            not_built.append(exc)
            return
        finally:
            built.set()
        await _warm_up(model[0])

    async def open_and_hold() -> None:
        # Shielded: a client that leaves at once still sees the stores open (or fail loudly)
        # and close; the lifespan's end calls want() and sets stopping, so this ends.
        with anyio.CancelScope(shield=True):
            await app.wanted(OPEN_WITHIN_S)
            await built.wait()
            try:
                if not_built:
                    raise not_built[0]
                async with _open_service(settings, model[0], warm_up=embedder is not None) as service:
                    app.attach(service)
                    logger.info(
                        "memory open; vectors: %s, graph: %s, data dir: %s",
                        settings.resolved_vector_backend,
                        settings.resolved_graph_backend,
                        settings.data_dir,
                    )
                    if on_open is not None:
                        on_open()
                    await stopping.wait()
            except BaseException as exc:
                app.fail(exc)
                raise

    async with anyio.create_task_group() as tg:
        if embedder is None:
            tg.start_soon(load_model)
        else:
            built.set()
        tg.start_soon(open_and_hold)
        try:
            yield app
        finally:
            # Not cancelled: the stores open (or fail loudly, e.g. locked by another process), then close.
            app.want()
            stopping.set()
    if embedder is None and model:
        await model[0].close()


def _build_embedder(settings: Settings) -> Embedder:
    from hybrid_memory.embeddings import build_embedder

    return build_embedder(settings.embedding, cache_dir=settings.data_dir / "models")


def _new_app(settings: Settings) -> AppContext:
    scope = Scope(project=settings.project or "default", user=settings.user)
    return AppContext(scope, project_from_roots=settings.project is None)


@asynccontextmanager
async def _open_service(
    settings: Settings, embedder: Embedder | None, *, warm_up: bool = True
) -> AsyncIterator[MemoryService]:
    # Imported here, not at the top: the handshake needs none of them.
    from hybrid_memory.backends import open_graph_store, open_vector_store
    from hybrid_memory.embeddings import build_embedder
    from hybrid_memory.service import MemoryService

    owned = embedder is None
    if embedder is None:
        embedder = build_embedder(settings.embedding, cache_dir=settings.data_dir / "models")
    try:
        try:
            dimension = embedder.dimension
        except BackendError:
            # An OpenAI-compatible model of unknown size: one probe call tells it.
            await embedder.warm_up()
            dimension = embedder.dimension
        async with (
            open_vector_store(settings, dimension=dimension, model=embedder.model_name) as vectors,
            open_graph_store(settings) as graph,
        ):
            service = MemoryService(settings=settings, vectors=vectors, graph=graph, embedder=embedder)
            scope = _new_app(settings).scope
            try:
                repaired = await service.repair(scope)
            except BackendUnavailableError as exc:  # a server store that is down: repair when it is back
                logger.warning("repair of half-done writes skipped: %s", exc)
                repaired = 0
            if repaired:
                logger.warning("re-indexed %d notes whose vector copy was missing", repaired)
            async with anyio.create_task_group() as tg:
                if warm_up:
                    # The model loads in the background, after the handshake, so the client never waits on it.
                    tg.start_soon(_warm_up, embedder)
                try:
                    yield service
                finally:
                    tg.cancel_scope.cancel()
    finally:
        if owned:
            await embedder.close()


async def _warm_up(embedder: Embedder) -> None:
    try:
        await embedder.warm_up()
    except BackendError as exc:  # the tools that need the model say so; keyword recall answers without it
        logger.warning("embedding model unavailable, writes will fail and recall is keyword-only: %s", exc)
    except Exception:
        logger.exception("embedding model failed to load in the background")


class _MemoryServer(MCPServer[AppContext]):
    """Builds its tools on first use: their schemas cost more than the rest of the start-up,
    and the handshake does not need them (the tools capability is there either way)."""

    def __init__(self, *args: Any, tool_set: ToolSet, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._tool_set: ToolSet = tool_set
        self._tools_built = False
        self.running: Callable[[], Awaitable[AppContext]] | None = None
        """Waits until the stores are open (set by :func:`build_server`)."""

    def _ensure_tools(self) -> None:
        if not self._tools_built:
            self._tools_built = True
            from hybrid_memory.tools.registry import build_tools  # every tool: after the handshake

            # The SDK takes finished tools only in its constructor; their lean schemas are set there.
            self._tool_manager = ToolManager(tools=build_tools(self._tool_set))

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
    settings: Settings, embedder: Embedder | None = None, *, on_open: Callable[[], None] | None = None
) -> MCPServer[AppContext]:
    """The MCP server with every tool, resource and prompt; nothing is opened until a transport runs it.

    ``embedder`` lets several servers share one loaded model (tests, benchmarks); the
    server then leaves closing it to the caller. ``on_open`` runs each time the stores
    have opened (``serve`` settles the heap then).
    """

    opened: list[AppContext] = []

    @asynccontextmanager
    async def lifespan(_: MCPServer[AppContext]) -> AsyncIterator[AppContext]:
        async with serving_app(settings, embedder, on_open=on_open) as app:
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
