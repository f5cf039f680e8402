"""The stores and the model of a server, made ready in the background: imports nothing of the MCP SDK.

A server that is to host the store starts a :class:`StoreOpening` before it imports its
protocol stack (about a second of the start), so the stores open and the model loads
meanwhile; the lifespan (:func:`hybrid_memory.server.app.serving_app`) takes it over.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import anyio

from hybrid_memory.errors import BackendError, BackendUnavailableError
from hybrid_memory.models import Scope
from hybrid_memory.settings import Settings

if TYPE_CHECKING:
    from hybrid_memory.embeddings import FastEmbedEmbedder, OpenAIEmbedder
    from hybrid_memory.embeddings.base import Embedder
    from hybrid_memory.service import MemoryService

logger = logging.getLogger(__name__)


class StoreOpening:
    """Opens the stores when :meth:`run` starts (a task) and holds them open until :meth:`close`.

    Without ``embedder``, the model is built here, loads while the stores open, and is
    closed with them. A store that cannot open
    (locked by another process, a path taken by a file) is what :meth:`service` raises, and
    what :meth:`run` raises too, so a server stops with that error whether or not a client
    has connected. ``on_open`` runs once they are open.
    """

    def __init__(
        self, settings: Settings, embedder: Embedder | None = None, on_open: Callable[[], None] | None = None
    ) -> None:
        self._settings = settings
        self._embedder = embedder
        self._on_open = on_open
        self._service: MemoryService | None = None
        self._failure: BaseException | None = None
        self._settled = anyio.Event()
        self._stopping = anyio.Event()
        self._closed = anyio.Event()

    async def run(self, after: Callable[[], Awaitable[None]] | None = None) -> None:
        """Open, hold until :meth:`close` is called, close. Shielded: a client that leaves at once
        still sees the stores open (or fail loudly) and close. What kept them from opening is
        raised here and by :meth:`service`."""
        settings = self._settings
        with anyio.CancelScope(shield=True):
            try:
                if after is not None:  # what the stores wait for before they open
                    await after()
                model = self._embedder
                owned = model is None
                if model is None:  # e.g. OpenAI without a key raises here: the server stops and says so
                    model = await anyio.to_thread.run_sync(build_model, settings)
                try:
                    async with anyio.create_task_group() as loading:
                        if owned:
                            # A model of its own loads beside the stores' opening, not after it: its
                            # session is built in native code, mostly off the interpreter's lock, and
                            # it is what a first recall waits for longest.
                            loading.start_soon(_warm_up, model)
                        async with open_service(settings, model, warm_up=not owned) as service:
                            self._service = service
                            self._settled.set()
                            logger.info(
                                "memory open; vectors: %s, graph: %s, data dir: %s",
                                settings.resolved_vector_backend,
                                settings.resolved_graph_backend,
                                settings.data_dir,
                            )
                            if self._on_open is not None:
                                self._on_open()
                            await self._stopping.wait()
                        loading.cancel_scope.cancel()
                finally:
                    if owned:
                        await model.close()
            except BaseException as exc:
                self._failure = exc
                self._settled.set()
                raise
            finally:
                self._closed.set()

    async def service(self) -> MemoryService:
        """The open service, once it is; raises what kept the stores from opening."""
        await self._settled.wait()
        if self._failure is not None:
            raise self._failure
        assert self._service is not None
        return self._service

    async def close(self) -> None:
        """Close the stores (once they have opened, or failed to) and return when they are closed.
        Call it only once :meth:`run` has started."""
        self._stopping.set()
        with anyio.CancelScope(shield=True):
            await self._closed.wait()


def build_model(settings: Settings) -> FastEmbedEmbedder | OpenAIEmbedder:
    """The configured embedding model, not loaded yet."""
    from hybrid_memory.embeddings import build_embedder

    return build_embedder(settings.embedding, cache_dir=settings.data_dir / "models")


@asynccontextmanager
async def open_service(
    settings: Settings,
    embedder: Embedder | None,
    *,
    warm_up: bool = True,
) -> AsyncIterator[MemoryService]:
    """Both stores open and half-done writes repaired; with ``warm_up``, the model loads meanwhile.

    The model loads once they are open (a store that cannot open fails before it has anything
    to say), mostly off the interpreter's lock, as the disk's part of the opening is.
    """
    # Imported here, not at the top: a relay to a running host needs none of them.
    from hybrid_memory.backends import open_graph_store, open_vector_store
    from hybrid_memory.service import MemoryService

    owned = embedder is None
    if embedder is None:
        embedder = build_model(settings)
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
                if warm_up:
                    # The model finishes loading in the background: the client never waits on it.
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
