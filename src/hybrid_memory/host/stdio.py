"""A stdio server as a relay to the data dir's host (:mod:`.serve`), hosting in-process when there is none.

Its client's stdin is read as lines so that a server told to stop never waits on it.

The SDK's stdio transport reads stdin in an anyio worker thread, and leaving the transport
waits for that thread; its read ends only at the client's EOF. A server stopped by SIGTERM
while its client keeps stdin open would never exit. Here a daemon thread reads instead:
cancelling the reader leaves it blocked in its read, and the process exits without it.

Like the SDK's own claim, fd 0 points at the null device while serving (children and stray
reads see EOF, never the protocol) and is pointed back at the wire on exit.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import signal
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from typing import cast

import anyio
import anyio.abc
import anyio.from_thread
import anyio.lowlevel
from mcp.server.stdio import stdio_server

from hybrid_memory.errors import BackendError
from hybrid_memory.host import lock
from hybrid_memory.host.async_relay import AsyncRelay
from hybrid_memory.host.serve import Host, quiet_cancelled_socket_waits

logger = logging.getLogger(__name__)


@contextmanager
def claimed_stdin() -> Iterator[int]:
    """A private duplicate of fd 0 to read the wire from, with fd 0 on the null device meanwhile."""
    wire = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
    finally:
        os.close(null)
    try:
        yield wire
    finally:
        os.dup2(wire, 0)
        # Not closed: the reading thread may still be blocked on it until the process ends.


class StdinLines:
    """An async iterable of the lines on ``fd`` (decoded as UTF-8), for ``stdio_server(stdin=...)``."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._send, self._receive = anyio.create_memory_object_stream[str](0)

    def close(self) -> None:
        """End the lines here, as the client's EOF would (call it on the event loop)."""
        self._send.close()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        send, receive = self._send, self._receive
        token = anyio.lowlevel.current_token()

        def read() -> None:
            try:
                with os.fdopen(self._fd, "rb", closefd=False) as wire:
                    for raw in wire:
                        anyio.from_thread.run(send.send, raw.decode("utf-8", errors="replace"), token=token)
            except Exception:  # the reader left, or the loop is gone (a stop): nothing to hand over
                return
            with contextlib.suppress(Exception):
                anyio.from_thread.run_sync(send.close, token=token)  # the client's EOF

        threading.Thread(target=read, name="stdin-reader", daemon=True).start()
        async with receive:
            async for line in receive:
                yield line


async def serve_stdio(host: Host, *, detached_host: bool = False, project: str | None = None) -> None:
    """Serve this process's stdio client through the data dir's host, hosting when there is none.

    With ``detached_host`` it starts a headless host instead of hosting in-process, so the
    store stays open after this client leaves (what the Claude Code plugin wants: the next
    session and its hooks find it warm). ``project``, this server's configured project, scopes
    its client's session on whichever process hosts (None: the client's roots decide).
    """
    quiet_cancelled_socket_waits()
    data_dir = host.data_dir
    if not lock.socket_fits(data_dir):  # the data dir exists: the command checked it
        raise BackendError(
            f"The data dir path {data_dir} is too long for its Unix socket ({lock.SOCKET_NAME}); "
            "set HYBRID_MEMORY_DATA_DIR to a shorter path."
        )
    with claimed_stdin() as wire:
        await _relay_stdio(host, StdinLines(wire), detached_host=detached_host, project=project)


async def _relay_stdio(host: Host, stdin: StdinLines, *, detached_host: bool, project: str | None) -> None:
    # The SDK reads its stdin only with ``async for``, which StdinLines provides.
    async with (
        stdio_server(stdin=cast("anyio.AsyncFile[str]", stdin)) as (client_in, client_out),
        anyio.create_task_group() as tg,
    ):

        async def connect() -> anyio.abc.ByteStream:
            return await host.join_or_host(tg, detached=detached_host)

        tg.start_soon(_stop_on_sigterm, stdin)
        try:
            await AsyncRelay(client_in, client_out, project).run(connect)
        finally:
            tg.cancel_scope.cancel()
            # The SDK's stdio transport ends only once its write stream is closed: without this
            # the process would outlive its client's EOF.
            await client_out.aclose()


async def _stop_on_sigterm(stdin: StdinLines) -> None:
    """SIGTERM ends the server as a closed stdin does: what is in flight is answered, the stores close.

    A second SIGTERM finds the default handler back and ends the process at once.
    """
    with anyio.open_signal_receiver(signal.SIGTERM) as signals:
        async for _ in signals:
            logger.info("SIGTERM: answering what is in flight, then exiting")
            stdin.close()
            return
