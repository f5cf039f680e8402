"""Progress of long writes, reported to whoever is listening, without the service knowing who.

The MCP layer installs a callback for one request (when the client sent a progress
token) with :func:`reporting`; the service calls :func:`report` as work gets done.
Without a callback, :func:`report` does nothing. A context variable carries it, so
every use case reports without a parameter threaded through each call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]
"""``(done, total, message)``; ``total`` is None when unknown."""

_current: ContextVar[ProgressCallback | None] = ContextVar("hybrid_memory_progress", default=None)


@contextmanager
def reporting(callback: ProgressCallback) -> Iterator[None]:
    """Send the progress of everything run inside this block to ``callback``."""
    token = _current.set(callback)
    try:
        yield
    finally:
        _current.reset(token)


async def report(done: float, total: float | None = None, message: str | None = None) -> None:
    """Tell the listener, if any, how far the current write has got."""
    callback = _current.get()
    if callback is not None:
        await callback(done, total, message)
