"""The server's side of a command call: run the body on the open stores, relay its stderr, answer."""

from __future__ import annotations

import io
import json
import logging
import math
from typing import Any, TextIO, cast

import anyio
import anyio.abc

from hybrid_memory.commands.handlers import BODIES, Target
from hybrid_memory.host import wire
from hybrid_memory.tools.app import AppContext

logger = logging.getLogger(__name__)

_DISCONNECTED = (anyio.BrokenResourceError, anyio.ClosedResourceError)


class _RelayedStderr(io.TextIOBase):
    """The command's stderr inside the server: each write is sent to the command as a notification."""

    def __init__(self, send: Any, tty: bool) -> None:
        self._send = send
        self._tty = tty

    def write(self, text: str) -> int:
        if text:
            self._send(wire.stderr_note(text))
        return len(text)

    def isatty(self) -> bool:
        # The command's terminal, not the server's: progress bars draw only where the user sees them.
        return self._tty


async def serve_command(first_line: bytes, stream: anyio.abc.ByteStream, app: AppContext) -> None:
    """Answer the command call in ``first_line`` on ``stream``; the caller closes the stream."""
    from hybrid_memory.exits import classify

    outbox, outgoing = anyio.create_memory_object_stream[bytes](math.inf)

    async def relay() -> None:
        connected = True
        async with outgoing:
            async for data in outgoing:
                if not connected:
                    continue  # the command left; its body still finishes (every body may run twice)
                try:
                    await stream.send(data)
                except _DISCONNECTED:
                    connected = False

    async with anyio.create_task_group() as tg:
        tg.start_soon(relay)
        with outbox:
            try:
                params = json.loads(first_line)["params"]
                name = params["command"]
                body = BODIES.get(name)
                if body is None:
                    raise ValueError(f"unknown command {name!r}; known: {', '.join(BODIES)}")
                await app.ready()
                service = app.service
                # The caller's scope over the server's stores, model and limits.
                settings = service.settings.model_copy(update=params["scope"])
                # A text stream in all but its buffer, which nothing here touches.
                stderr = cast(TextIO, _RelayedStderr(outbox.send_nowait, params["tty"]))
                logger.info("running `hybrid-memory %s` for a command that joined", name)
                reply = await body(Target(settings, service, stderr), params["args"])
                outbox.send_nowait(wire.answer(reply))
            except Exception as exc:  # the command prints it as one line, with its exit code
                code, message = classify(exc)
                outbox.send_nowait(wire.failure(code, message))
