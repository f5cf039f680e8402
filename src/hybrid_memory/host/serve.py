"""One memory for many stdio clients: the first ``serve`` on a data dir owns the store, the rest join it.

An embedded store belongs to one process (its directory lock). So every stdio server
is a relay between its client and a *host*: the process holding ``serve.lock`` in the
data dir, which opens the stores once and serves MCP to each connection on the Unix
socket ``serve.sock`` beside it (mode 0600, only its user can connect). The first
server to find no host becomes it, in-process, and relays to itself like any other.

Each connection is its own MCP session on the host, so a client's roots (its project),
sampling and logging stay its own, exactly as with a server of its own. A connection
whose first line requests a method plugged in (:class:`Plugins`: the command call of
:mod:`hybrid_memory.host.wire`, a ``hybrid-memory stats``/``export``/... run on the
host's open stores) is answered by that plugin instead; one that requests
:data:`~hybrid_memory.host.wire.STOP` stops the host (``hybrid-memory stop``). Each
socket plugged in (the read-only viewer's ``view.sock``) is served beside ``serve.sock``
once the stores are open. An HTTP server hosts the same socket (:meth:`Host.serve`),
so stdio servers and commands join it too.

When the host exits (its own client left, or it was killed) every relay sees its
connection end; one of them takes ``serve.lock`` and hosts, the others connect to it,
and each replays its client's handshake and the requests still unanswered
(:mod:`hybrid_memory.host.relay`), so a client sees no failed call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import serve_dual_era_loop
from mcp.shared.message import SessionMessage

from hybrid_memory.errors import StoreLockedError
from hybrid_memory.host import lock
from hybrid_memory.host.start import attempts
from hybrid_memory.host.wire import MAX_MESSAGE_BYTES, RETRY_S, STOP, line, method_of

logger = logging.getLogger(__name__)

Listener = anyio.abc.Listener[anyio.abc.SocketStream]

CallHandler = Callable[[bytes, anyio.abc.ByteStream, Any], Awaitable[None]]
"""Answers a connection whose first line is a request for its method: (that line, the connection, the
lifespan's state); the host closes the connection after."""
SocketHandler = Callable[[Path, Callable[[], Awaitable[Any]]], Awaitable[None]]
"""Serves a socket of its own in the data dir (its path; a call that waits for the open stores) until
cancelled; started once the stores are open."""


@dataclass(frozen=True)
class Plugins:
    """What a host serves beside MCP, plugged in at start-up: the host imports none of it."""

    calls: Mapping[str, CallHandler] = field(default_factory=dict)
    """A JSON-RPC method -> the handler of a connection whose first line requests it."""
    sockets: Mapping[str, SocketHandler] = field(default_factory=dict)
    """A socket's file name in the data dir -> what serves it."""
    on_open: Sequence[Callable[[Path], Awaitable[None]]] = ()
    """Run once the stores are open, with the data dir (work left for a host, such as pending captures)."""


def quiet_cancelled_socket_waits() -> None:
    """Drop asyncio's harmless report of a socket read woken after anyio cancelled it (see below)."""
    logging.getLogger("asyncio").addFilter(_CancelledSocketWait())


class _CancelledSocketWait(logging.Filter):
    """Drops asyncio's report of a socket read woken after anyio cancelled it (anyio 4.x, harmless).

    Cancelling a wait for a Unix socket to become readable leaves its reader callback
    registered until the next loop iteration; data arriving in between sets the
    cancelled future, and asyncio logs that as an error with a traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (isinstance(exc, asyncio.InvalidStateError) and "Future.set_result" in record.getMessage())


async def _wait(steps: Iterator[socket.socket | int | None]) -> socket.socket | int:
    """:func:`~hybrid_memory.host.start.wait` on the event loop."""
    for got in steps:
        if got is not None:
            return got
        await anyio.sleep(RETRY_S)
    raise AssertionError("attempts() ends only after yielding what it got")


def _waiting_for(command: str) -> None:
    logger.info("waiting for %s to finish with the store", command)


class Host:
    """A data dir's host in the making: ``server``'s MCP sessions on ``serve.sock``, and ``plugins``."""

    def __init__(
        self, server: MCPServer[Any], data_dir: Path, plugins: Plugins, *, lock_fd: int | None = None
    ) -> None:
        self.server = server
        self.data_dir = data_dir
        self.plugins = plugins
        self._lowlevel: Server[Any] = server._lowlevel_server  # the SDK's own transports drive it so
        self._lock_fd = lock_fd
        """The host lock, taken before this was built (the stores started opening then): hosting
        begins with it instead of trying to join or lock."""

    async def join_or_host(self, tg: anyio.abc.TaskGroup, *, detached: bool = False) -> anyio.abc.ByteStream:
        """A connection to the data dir's host; with none, this becomes it in ``tg`` (until cancelled), or
        with ``detached`` a headless host is started, which outlives this process."""

        def fail(reason: str) -> StoreLockedError:
            return StoreLockedError(f"{reason}; stop it, or set HYBRID_MEMORY_DATA_DIR to another directory.")

        got: socket.socket | int | None = self._lock_fd
        self._lock_fd = None
        if got is None:
            holder = None if detached else lock.SERVER
            got = await _wait(
                attempts(self.data_dir, fail, start=detached, holder=holder, waiting_for=_waiting_for)
            )
        if isinstance(got, int):
            await tg.start(self._run, got)
            return await anyio.connect_unix(lock.socket_path(self.data_dir))
        return await anyio.abc.UNIXSocketStream.from_socket(got)

    async def serve_headless(self, idle_exit_s: float) -> None:
        """Host the store with no client of its own, until no one has connected for ``idle_exit_s``.

        What a hook starts when it finds no host: later servers, hooks and commands join it
        like any host. Returns at once when another process already hosts.
        """
        quiet_cancelled_socket_waits()
        lock_fd, self._lock_fd = self._lock_fd, None
        if lock_fd is None:
            lock_fd = lock.try_lock(self.data_dir, lock.SERVER)
        if lock_fd is None:
            logger.info("another process already hosts the memory store in %s", self.data_dir)
            return
        async with anyio.create_task_group() as tg:

            async def stop_on_signal() -> None:
                # No terminal and no client of its own: SIGTERM / SIGINT are how it is told to stop,
                # and it closes the stores before it goes.
                with anyio.open_signal_receiver(signal.SIGTERM, signal.SIGINT) as signals:
                    async for signum in signals:
                        logger.info("signal %d: the headless host closes the store and exits", signum)
                        tg.cancel_scope.cancel()
                        return

            tg.start_soon(stop_on_signal)
            await self._run(lock_fd, idle_exit_s)
            tg.cancel_scope.cancel()

    async def take_lock(self) -> int:
        """The host lock for a server that cannot join another (HTTP); waits while a command holds it."""

        def fail(reason: str) -> StoreLockedError:
            return StoreLockedError(
                f"{reason}; stop it before serving HTTP here, or pass --data-dir (HYBRID_MEMORY_DATA_DIR) "
                "for another store."
            )

        steps = attempts(
            self.data_dir, fail, join=False, holder=lock.SERVER, timeout_s=0, waiting_for=_waiting_for
        )
        fd = await _wait(steps)
        assert isinstance(fd, int)  # it never joins
        return fd

    async def _run(
        self,
        lock_fd: int,
        idle_exit_s: float | None = None,
        *,
        task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Open the stores once and serve until cancelled; ``lock_fd`` is ours to close.

        The host lock is released last, after the stores are closed, so the next host
        never finds the store directory still locked.
        """
        try:
            async with self._lowlevel.lifespan(self._lowlevel) as state:
                listener = await self.listen()
                task_status.started()
                await self.serve(listener, state, idle_exit_s)
        finally:
            os.close(lock_fd)

    async def listen(self) -> Listener:
        """Listen on the data dir's socket; the caller holds the host lock, so a socket file left there
        is a dead host's."""
        socket_path = lock.socket_path(self.data_dir)
        with contextlib.suppress(FileNotFoundError):
            os.unlink(socket_path)
        listener = await anyio.create_unix_listener(socket_path, mode=0o600)
        logger.debug("hosting the memory store for every server and command on %s", socket_path)
        return listener

    async def serve(self, listener: Listener, state: Any, idle_exit_s: float | None = None) -> None:
        """Serve ``state`` (the lifespan's, stores open or opening) on ``listener`` until cancelled, or
        with ``idle_exit_s`` until no session has been open that long."""
        async with listener, anyio.create_task_group() as tg:
            running = getattr(self.server, "running", None)
            if running is not None:  # our server (not a bare SDK one): plugged sockets once the stores open
                for name, handler in self.plugins.sockets.items():
                    tg.start_soon(_once_open, running, partial(handler, self.data_dir / name, running))
                for task in self.plugins.on_open:
                    tg.start_soon(_once_open, running, partial(_logged, task, self.data_dir))
            idle = None if idle_exit_s is None else _IdleExit(idle_exit_s, tg.cancel_scope)

            async def session(stream: anyio.abc.SocketStream) -> None:
                with idle.busy() if idle is not None else contextlib.nullcontext():
                    await self._session(state, stream)

            if idle is not None:
                tg.start_soon(idle.watch)
            await listener.serve(session, task_group=tg)

    async def _session(self, state: Any, stream: anyio.abc.SocketStream) -> None:
        """One connection: a relay's (or a hook's) MCP session, or a plugged call (its first line says)."""
        buffered = BufferedByteReceiveStream(stream)
        async with stream:
            try:
                first = await buffered.receive_until(b"\n", MAX_MESSAGE_BYTES)
            except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
                return
            method = method_of(first)
            if method == STOP:
                await _stop(stream)
                return
            handler = self.plugins.calls.get(method or "")
            if handler is not None:
                await handler(first, stream, state)
                return
            await _serve_mcp(self._lowlevel, state, stream, buffered, first)


async def _once_open(running: Callable[[], Awaitable[Any]], plugged: Callable[[], Awaitable[None]]) -> None:
    """Run ``plugged`` once the stores are open; not at all when they cannot open."""
    try:
        await running()
    except Exception:
        return  # the stores could not open: the server stops and says why, in one line of its own
    await plugged()


async def _logged(task: Callable[[Path], Awaitable[None]], data_dir: Path) -> None:
    try:
        await task(data_dir)
    except Exception:
        logger.exception("a start-up task of the host failed; the host goes on")


async def _stop(stream: anyio.abc.SocketStream) -> None:
    """``hybrid-memory stop``: answer with our pid, then stop as SIGTERM stops this process (every kind of
    host handles it: what is in flight is answered, the stores close, the lock is released last)."""
    logger.info("asked to stop by hybrid-memory stop")
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await stream.send(line({"jsonrpc": "2.0", "id": 1, "result": {"pid": os.getpid()}}))
    signal.raise_signal(signal.SIGTERM)


class _IdleExit:
    """Cancels ``scope`` once no session has been open for ``after_s``."""

    def __init__(self, after_s: float, scope: anyio.CancelScope) -> None:
        self._after_s = after_s
        self._scope = scope
        self._active = 0
        self._changed = anyio.Event()

    @contextmanager
    def busy(self) -> Iterator[None]:
        self._active += 1
        self._poke()
        try:
            yield
        finally:
            self._active -= 1
            self._poke()

    def _poke(self) -> None:
        self._changed.set()
        self._changed = anyio.Event()

    async def watch(self) -> None:
        while True:
            changed = self._changed
            if self._active:
                await changed.wait()
                continue
            with anyio.move_on_after(self._after_s):
                await changed.wait()
            if not changed.is_set() and not self._active:
                logger.info("no client for %g s: the headless host exits", self._after_s)
                self._scope.cancel()
                return


async def _serve_mcp(
    lowlevel: Server[Any],
    state: Any,
    stream: anyio.abc.SocketStream,
    buffered: BufferedByteReceiveStream,
    first: bytes,
) -> None:
    """An MCP session over the connection, newline-delimited JSON as on stdio."""
    read_in, read_out = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_in, write_out = anyio.create_memory_object_stream[SessionMessage](0)

    async def receive() -> None:
        line = first
        async with read_in:
            while True:
                try:
                    message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
                except Exception as exc:  # the session answers a malformed message, as over stdio
                    await read_in.send(exc)
                else:
                    await read_in.send(SessionMessage(message))
                try:
                    line = await buffered.receive_until(b"\n", MAX_MESSAGE_BYTES)
                except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
                    return

    async def send() -> None:
        async with write_out:
            async for item in write_out:
                data = item.message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
                try:
                    await stream.send(data)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    return

    async with anyio.create_task_group() as tg:
        tg.start_soon(receive)
        tg.start_soon(send)
        await serve_dual_era_loop(
            lowlevel,
            read_out,
            write_in,
            lifespan_state=state,
            init_options=lowlevel.create_initialization_options(),
        )
        tg.cancel_scope.cancel()
