"""The client's stdin as lines, read so that a server told to stop never waits on it.

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
import os
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager

import anyio
import anyio.from_thread
import anyio.lowlevel


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
