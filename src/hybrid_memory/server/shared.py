"""One memory for many stdio clients: the first ``serve`` on a data dir owns the store, the rest join it.

An embedded store belongs to one process (its directory lock). So every stdio server
is a relay between its client and a *host*: the process holding ``serve.lock`` in the
data dir, which opens the stores once and serves MCP to each connection on the Unix
socket ``serve.sock`` beside it (mode 0600, only its user can connect). The first
server to find no host becomes it, in-process, and relays to itself like any other.

Each connection is its own MCP session on the host, so a client's roots (its project),
sampling and logging stay its own, exactly as with a server of its own. A connection
whose first line is a command call (:mod:`hybrid_memory.commands.wire`) is instead a
``hybrid-memory stats``/``export``/... run on the host's open stores. An HTTP server
hosts the same socket (:func:`serve_socket`), so stdio servers and commands join it too.

When the host exits (its own client left, or it was killed) every relay sees its
connection end; one of them takes ``serve.lock`` and hosts, the others connect to it,
and each replays its client's handshake and the requests still unanswered
(:mod:`hybrid_memory.server.relay`), so a client sees no failed call.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import os
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.server.lowlevel import Server
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import serve_dual_era_loop
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage

from hybrid_memory import hostlock
from hybrid_memory.commands.wire import is_request as is_command
from hybrid_memory.errors import BackendError, StoreLockedError
from hybrid_memory.server.relay import MAX_MESSAGE_BYTES, Relay

logger = logging.getLogger(__name__)

SOCKET_NAME = hostlock.SOCKET_NAME
HOST_LOCK_NAME = hostlock.HOST_LOCK_NAME
JOIN_TIMEOUT_S = 60.0
"""How long a server waits for another that is opening the stores to start listening."""
_RETRY_S = 0.05


class _CancelledSocketWait(logging.Filter):
    """Drops asyncio's report of a socket read woken after anyio cancelled it (anyio 4.x, harmless).

    Cancelling a wait for a Unix socket to become readable leaves its reader callback
    registered until the next loop iteration; data arriving in between sets the
    cancelled future, and asyncio logs that as an error with a traceback.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (isinstance(exc, asyncio.InvalidStateError) and "Future.set_result" in record.getMessage())


async def serve_stdio(server: MCPServer[Any], data_dir: Path) -> None:
    """Serve this process's stdio client through the data dir's host, hosting when there is none."""
    logging.getLogger("asyncio").addFilter(_CancelledSocketWait())
    if not hostlock.socket_fits(data_dir):  # the data dir exists: the command checked it
        raise BackendError(
            f"The data dir path {data_dir} is too long for its Unix socket ({SOCKET_NAME}); "
            "set HYBRID_MEMORY_DATA_DIR to a shorter path."
        )
    async with stdio_server() as (client_in, client_out), anyio.create_task_group() as tg:

        async def connect() -> anyio.abc.ByteStream:
            return await _join_or_host(tg, server, data_dir)

        try:
            await Relay(client_in, client_out).run(connect)
        finally:
            tg.cancel_scope.cancel()
            # The SDK's stdio transport ends only once its write stream is closed: without this
            # the process would outlive its client's EOF.
            await client_out.aclose()


async def _join_or_host(
    tg: anyio.abc.TaskGroup, server: MCPServer[Any], data_dir: Path
) -> anyio.abc.ByteStream:
    socket_path = data_dir / SOCKET_NAME
    deadline = time.monotonic() + JOIN_TIMEOUT_S
    told = False
    while True:
        try:
            return await anyio.connect_unix(socket_path)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ECONNREFUSED, errno.EAGAIN):
                raise
        lock_fd = hostlock.try_lock(data_dir, hostlock.SERVER)
        if lock_fd is not None:
            await tg.start(_host, server, data_dir, lock_fd)
            return await anyio.connect_unix(socket_path)
        command = hostlock.command_holding(data_dir)
        if command is not None:
            # A command opened the store itself (no server was running): ours once it is done.
            if not told:
                logger.info("waiting for %s to finish with the store", command)
                told = True
            deadline = time.monotonic() + JOIN_TIMEOUT_S
        elif time.monotonic() > deadline:
            raise StoreLockedError(
                f"Another hybrid-memory server holds {data_dir / HOST_LOCK_NAME} but has not answered "
                f"on {socket_path} for {JOIN_TIMEOUT_S:g} s; stop it, or set HYBRID_MEMORY_DATA_DIR "
                "to another directory."
            )
        await anyio.sleep(_RETRY_S)


async def _host(
    server: MCPServer[Any],
    data_dir: Path,
    lock_fd: int,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Open the stores once and serve MCP on the socket until cancelled; ``lock_fd`` is ours to close.

    The host lock is released last, after the stores are closed, so the next host
    never finds the store directory still locked.
    """
    lowlevel: Server[Any] = server._lowlevel_server  # the SDK's own transports drive it the same way
    try:
        async with lowlevel.lifespan(lowlevel) as state:
            await serve_socket(server, state, data_dir, task_status=task_status)
    finally:
        os.close(lock_fd)


async def serve_socket(
    server: MCPServer[Any],
    state: Any,
    data_dir: Path,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Serve ``state`` (the lifespan's, stores open or opening) on the data dir's socket until cancelled.

    The caller holds the host lock: any socket file left there is a dead host's.
    """
    lowlevel: Server[Any] = server._lowlevel_server
    socket_path = data_dir / SOCKET_NAME
    socket_path.unlink(missing_ok=True)
    listener = await anyio.create_unix_listener(socket_path, mode=0o600)
    logger.debug("hosting the memory store for every server and command on %s", socket_path)
    task_status.started()
    async with listener:

        async def session(stream: anyio.abc.SocketStream) -> None:
            await _serve_session(lowlevel, state, stream)

        await listener.serve(session)


async def take_host_lock(data_dir: Path) -> int:
    """The host lock for a server that cannot join another (HTTP); waits while a command holds it."""
    told = False
    while True:
        lock_fd = hostlock.try_lock(data_dir, hostlock.SERVER)
        if lock_fd is not None:
            return lock_fd
        command = hostlock.command_holding(data_dir)
        if command is None:
            raise StoreLockedError(
                f"Another hybrid-memory server already holds the store in {data_dir} (it holds "
                f"{data_dir / HOST_LOCK_NAME}); stop it before serving HTTP here, or pass --data-dir "
                "(HYBRID_MEMORY_DATA_DIR) for another store."
            )
        if not told:
            logger.info("waiting for %s to finish with the store", command)
            told = True
        await anyio.sleep(_RETRY_S)


async def _serve_session(lowlevel: Server[Any], state: Any, stream: anyio.abc.SocketStream) -> None:
    """One connection: a relay's (or a hook's) MCP session, or a command's call (its first line says)."""
    buffered = BufferedByteReceiveStream(stream)
    async with stream:
        try:
            first = await buffered.receive_until(b"\n", MAX_MESSAGE_BYTES)
        except (anyio.EndOfStream, anyio.IncompleteRead, anyio.BrokenResourceError):
            return
        if is_command(first):
            from hybrid_memory.commands.host import serve_command  # only when a command joins

            await serve_command(first, stream, state)
            return
        await _serve_mcp(lowlevel, state, stream, buffered, first)


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
