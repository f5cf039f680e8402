"""The viewer served by a store's host on the Unix socket ``view.sock``, for ``hybrid-memory view``.

A process that hosts a data dir's store for stdio servers (:mod:`hybrid_memory.host.serve`)
listens here once its stores are open, so that ``hybrid-memory view`` can show the memory
while a server holds it, reading through that server's own service. The web stack (uvicorn,
starlette, the viewer's routes: tens of MB resident) is imported only when a viewer first
connects, so a host nobody views pays nothing for it. The socket is mode 0600, like
``serve.sock`` beside it: only the user who owns the memory connects.
"""

from __future__ import annotations

import contextlib
import logging
import os
import socket
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

if TYPE_CHECKING:
    from hybrid_memory.tools.app import AppContext

logger = logging.getLogger(__name__)

VIEW_SOCKET_NAME = "view.sock"
SHUTDOWN_S = 2


def _listen(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    path.unlink(missing_ok=True)  # a dead host's: the caller holds the host lock
    mask = os.umask(0o177)  # created 0600, never readable by others even for a moment
    try:
        sock.bind(os.fsdecode(path))
    finally:
        os.umask(mask)
    sock.listen(64)
    return sock


def _close(sock: socket.socket, path: Path) -> None:
    sock.close()
    path.unlink(missing_ok=True)


async def serve_viewer_socket(path: Path, running: Callable[[], Awaitable[AppContext]]) -> None:
    """Serve the viewer on ``path`` (the data dir's ``view.sock``) until cancelled; called once the
    stores are open.

    A failure here is logged and ends only the viewer: the host keeps serving MCP.
    """
    try:
        sock = _listen(path)
    except OSError as exc:
        logger.warning("memory viewer not served on %s: %s", path, exc)
        return
    try:
        await anyio.wait_readable(sock)  # a viewer is connecting: it waits in the backlog meanwhile
    except BaseException:
        _close(sock, path)
        raise
    await _serve(sock, path, running)


async def _serve(sock: socket.socket, path: Path, running: Callable[[], Awaitable[AppContext]]) -> None:
    import uvicorn
    from starlette.applications import Starlette

    from hybrid_memory.viewer.app import viewer_routes
    from hybrid_memory.viewer.source import ViewerSource

    class Embedded(uvicorn.Server):
        """Inside another server's process: the signals stay that process's to handle."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    config = uvicorn.Config(
        Starlette(routes=viewer_routes(ViewerSource(running))),
        lifespan="off",
        log_config=None,
        log_level="warning",
        timeout_graceful_shutdown=SHUTDOWN_S,
    )
    server = Embedded(config)
    try:
        await server.serve(sockets=[sock])
    except Exception:
        logger.exception("memory viewer on %s stopped", path)
    finally:
        with anyio.CancelScope(shield=True):
            if server.started and not server.should_exit:
                server.should_exit = True
                await server.shutdown(sockets=[sock])
            _close(sock, path)
