"""``hybrid-memory serve``: the server over stdio, over HTTP, or headless, as the data dir's host or a relay.

A server that finds no process holding the host lock takes it first thing, imports the MCP
SDK and builds the server (so the client's handshake is answered as early as it can be),
then opens its stores and loads its model
(:class:`~hybrid_memory.server.opening.StoreOpening`) at once, while the handshake and the
tool list go on, without waiting for either. A server that finds a host running relays to
it and opens nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from hybrid_memory.exits import INTERRUPTED, OK, check_data_dir, classify

if TYPE_CHECKING:
    import anyio.abc
    from mcp.server.mcpserver import MCPServer

    from hybrid_memory.host.serve import CallHandler, Host
    from hybrid_memory.integrations.capture import Captures
    from hybrid_memory.server.opening import StoreOpening
    from hybrid_memory.settings import Settings


def serve(args: argparse.Namespace, settings: Settings) -> NoReturn:
    """Serve until the client leaves (stdio), the server is told to stop, or a headless host is idle."""
    import anyio

    from hybrid_memory.server import heap

    if args.transport == "http":
        from hybrid_memory.server.http import check_http_settings

        check_http_settings(settings.http)
    check_data_dir(settings.data_dir)
    heap.tune()
    try:
        anyio.run(_serve_async, args, settings, _lock_at_once(settings, args))
    except KeyboardInterrupt:
        _exit_without_teardown(INTERRUPTED)
    except Exception as exc:  # one line and a code by cause, as for every command (exits.py)
        code, line = classify(exc)
        print(f"hybrid-memory: {line}", file=sys.stderr)
        _exit_without_teardown(code)
    _exit_without_teardown(OK)


def _lock_at_once(settings: Settings, args: argparse.Namespace) -> int | None:
    """The host lock, for a stdio server that is to host the store (no process holds it): taken first, so
    the stores open as soon as the server is built; for a headless host, the lock it took before the CLI
    loaded. None otherwise (the usual wait decides)."""
    from hybrid_memory.host.lock import SERVER, claimed, socket_fits, try_lock

    if args.headless:
        return claimed()  # taken before the CLI loaded, when the data dir was given by --data-dir
    if args.transport == "http" or args.detached_host:
        return None
    if not socket_fits(settings.data_dir):
        return None  # the server refuses this data dir: it says why before anything opens
    return try_lock(settings.data_dir, SERVER)


async def _serve_async(args: argparse.Namespace, settings: Settings, lock_fd: int | None) -> None:
    import anyio

    from hybrid_memory.server import heap
    from hybrid_memory.server.opening import StoreOpening

    if lock_fd is None or args.headless:
        # A relay to a running host, an HTTP server, or a headless host (which opens its stores once its
        # first client asks, so that a store that cannot open tells that client why): nothing opens yet.
        await _run_host(args, settings, _build_host(settings, None, lock_fd))
        return
    # This process hosts: the model loads and the stores open once the protocol stack is built.
    opening = StoreOpening(settings, on_open=heap.settle)

    async def open_stores() -> None:
        # A store that cannot open stops the server from the lifespan, as any server's does: once it
        # listens, so the hooks and clients that came are told why. The opening imports once the tools'
        # thread has (see _MemoryServer.imported).
        with contextlib.suppress(Exception):
            await opening.run(after=getattr(host.server, "imported", None))

    async with anyio.create_task_group() as tg:
        # The protocol stack first, so that the client's handshake is answered as soon as it can be; the
        # stores open while it goes on (one import at a time: two threads of Python only slow each other).
        host = await anyio.to_thread.run_sync(_build_host, settings, opening, lock_fd)
        tg.start_soon(open_stores)
        try:
            await _run_host(args, settings, host)
        finally:
            await opening.close()
    # Stores that could not open end the server with their error, whether a client stayed to hear it or not.
    await opening.service()


def _build_host(settings: Settings, opening: StoreOpening | None, lock_fd: int | None) -> Host:
    from hybrid_memory.server import build_server, heap

    server = build_server(settings, on_open=heap.settle, opening=opening)
    return host_of(server, settings, lock_fd)


async def _run_host(args: argparse.Namespace, settings: Settings, host: Host) -> None:
    if args.headless:
        await host.serve_headless(args.idle_exit)
    elif args.transport == "http":
        from hybrid_memory.server.http import serve_http
        from hybrid_memory.viewer.app import http_pages

        embedded = settings.resolved_vector_backend == "edge" or settings.resolved_graph_backend == "sqlite"
        await serve_http(settings.http, settings.log_level, host, embedded=embedded, pages=http_pages())
    else:
        from hybrid_memory.host.stdio import serve_stdio

        await serve_stdio(host, detached_host=args.detached_host, project=settings.project)


def _exit_without_teardown(code: int) -> NoReturn:
    """End a server that has stopped: its stores are closed and its answers written.

    The interpreter's own teardown (freeing the model and every object) would add about
    half a second to each stop for nothing, and a server that could not start may have a
    thread still in the model's native code, which the teardown would abort.
    """
    logging.shutdown()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def host_of(server: MCPServer[Any], settings: Settings, lock_fd: int | None = None) -> Host:
    """The data dir's host to be, with what it serves beside MCP: the store commands that join it, the
    hooks' injections and captures, the viewer on its own socket, and the captures that wait for a host."""
    from hybrid_memory.host.serve import Host, Plugins
    from hybrid_memory.host.wire import CAPTURE, INJECT, METHOD
    from hybrid_memory.viewer.hosted import VIEW_SOCKET_NAME, serve_viewer_socket

    plugins = Plugins(
        calls={
            METHOD: _on_first_call("hybrid_memory.commands.served", "serve_command"),
            INJECT: _on_first_call("hybrid_memory.integrations.hosted", "serve_injection"),
            CAPTURE: _captures(),
        },
        sockets={VIEW_SOCKET_NAME: serve_viewer_socket},
        on_open=[_drop_earlier_state, _capture_pending],
    )
    return Host(server, settings.data_dir, plugins, lock_fd=lock_fd)


def _on_first_call(module: str, name: str) -> CallHandler:
    """The call handler ``module.name``, imported when a call first comes: a host's first answer needs none
    of them (the hooks' injections alone import a tenth of a second)."""

    async def handler(first: bytes, stream: anyio.abc.ByteStream, state: Any) -> None:
        await getattr(importlib.import_module(module), name)(first, stream, state)

    return handler


def _captures() -> CallHandler:
    """The hooks' captures, one ``Captures`` for the host's life, made when the first capture comes."""
    made: list[Captures] = []

    async def handler(first: bytes, stream: anyio.abc.ByteStream, state: Any) -> None:
        if not made:
            from hybrid_memory.integrations.capture import Captures

            made.append(Captures())
        await made[0].serve(first, stream, state)

    return handler


async def _drop_earlier_state(data_dir: Path) -> None:
    from hybrid_memory.integrations.capture import drop_earlier_state

    await drop_earlier_state(data_dir)


async def _capture_pending(data_dir: Path) -> None:
    """The captures that wait (a host was down, a command held the store), done by the host that starts:
    in a thread, as a client of the host like the hooks that left them."""
    import anyio

    from hybrid_memory.integrations.pending import retry_at_start

    await anyio.to_thread.run_sync(retry_at_start, data_dir, abandon_on_cancel=True)
