"""Build the MCP server: one ``MemoryService`` per process, opened and closed by the lifespan."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from mcp.server.mcpserver import MCPServer

from hybrid_memory import __version__
from hybrid_memory.backends import open_graph_store, open_vector_store
from hybrid_memory.embeddings import build_embedder
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.errors import BackendError, BackendUnavailableError
from hybrid_memory.models import Scope
from hybrid_memory.service import MemoryService
from hybrid_memory.settings import Settings
from hybrid_memory.tools import register_tools
from hybrid_memory.tools._guard import guard_tool_calls
from hybrid_memory.tools.context import AppContext

logger = logging.getLogger(__name__)

INSTRUCTIONS = """\
Long-term memory across conversations. Call recall_memory before answering anything that may depend
on earlier sessions (the user's preferences, decisions, facts, past work). Call remember_thread at the
end of a conversation (or every few turns) with its user and assistant messages. Distil durable knowledge
into typed notes with create_note and connect them with create_link; get_linked_notes walks from a note
to what is known around it. forget deletes a memory, a note, or a whole thread."""


@asynccontextmanager
async def open_app(settings: Settings, embedder: Embedder | None = None) -> AsyncIterator[AppContext]:
    """Open both stores (and the embedder unless one is given), repair half-done writes, close on exit."""
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
            scope = Scope(project=settings.project or "default", user=settings.user)
            try:
                repaired = await service.repair(scope)
            except BackendUnavailableError as exc:  # a server store that is down: repair when it is back
                logger.warning("repair of half-done writes skipped: %s", exc)
                repaired = 0
            if repaired:
                logger.warning("re-indexed %d notes whose vector copy was missing", repaired)
            async with anyio.create_task_group() as tg:
                # The model loads in the background, after the handshake, so the client never waits on it.
                tg.start_soon(_warm_up, embedder)
                try:
                    yield AppContext(
                        service=service, scope=scope, project_from_roots=settings.project is None
                    )
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


def build_server(settings: Settings, embedder: Embedder | None = None) -> MCPServer[AppContext]:
    """The MCP server with every tool registered; nothing is opened until a transport runs it.

    ``embedder`` lets several servers share one loaded model (tests, benchmarks); the
    server then leaves closing it to the caller.
    """

    @asynccontextmanager
    async def lifespan(_: MCPServer[AppContext]) -> AsyncIterator[AppContext]:
        async with open_app(settings, embedder) as app:
            logger.info(
                "memory open; vectors: %s, graph: %s, data dir: %s",
                settings.resolved_vector_backend,
                settings.resolved_graph_backend,
                settings.data_dir,
            )
            yield app

    server: MCPServer[AppContext] = MCPServer(
        "hybrid-memory",
        title="Hybrid memory",
        instructions=INSTRUCTIONS,
        version=__version__,
        lifespan=lifespan,
        log_level=settings.log_level,
        middleware=[guard_tool_calls],
    )
    register_tools(server)
    return server
