"""A stdio client's messages relayed to the host's socket and back, surviving a change of host.

The relay remembers the client's handshake (``initialize`` and ``notifications/initialized``)
and every request not answered yet. When the connection to the host ends while the
client is still there, it connects again (to the next host, perhaps itself), replays
the handshake (answering nothing: the client already has its answer) and re-sends the
unanswered requests. A write re-sent after its host had already done it is harmless:
messages are stored under deterministic ids and a repeated note comes back as the
near-duplicate it is.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 256 * 1024 * 1024
"""The largest single message relayed (a remember_thread of a whole long session)."""
DRAIN_S = 30.0
"""How long a relay whose client closed its side still waits for the answers in flight."""
_REPLAY_ID_PREFIX = "hybrid-memory-rejoin-"
_DISCONNECTED = (
    anyio.EndOfStream,
    anyio.IncompleteRead,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)


class Relay:
    """Relays one client's session to a host connection made by ``connect``, reconnecting as needed."""

    def __init__(
        self,
        client_in: ReadStream[SessionMessage | Exception],
        client_out: WriteStream[SessionMessage],
    ) -> None:
        self._client_in = client_in
        self._client_out = client_out
        self._handshake: list[dict[str, Any]] = []
        self._pending: dict[str | int, bytes] = {}
        """Client requests sent to a host and not answered yet, in the order sent."""
        self._replays = 0
        self._client_gone = False
        self._answered = anyio.Event()
        """Set once the client has left and every request it sent is answered."""

    async def run(self, connect: Callable[[], Awaitable[anyio.abc.ByteStream]]) -> None:
        """Relay until the client closes its side."""
        host = await connect()
        while True:
            await self._pump(host)
            if self._client_gone:
                return
            logger.info("the shared memory server went away; joining the next one")
            host = await connect()
            await self._rejoin(host)

    async def _rejoin(self, host: anyio.abc.ByteStream) -> None:
        for message in self._handshake:
            if "id" in message:
                self._replays += 1
                message = {**message, "id": f"{_REPLAY_ID_PREFIX}{self._replays}"}
            await host.send(_line(message))
        for data in list(self._pending.values()):
            await host.send(data)

    async def _pump(self, host: anyio.abc.ByteStream) -> None:
        """Relay both ways until the client or the host ends; the host connection is closed after."""
        async with host, anyio.create_task_group() as tg:

            async def from_client() -> None:
                async for item in self._client_in:
                    if isinstance(item, Exception):
                        logger.warning("dropped a malformed message from the client: %s", item)
                        continue
                    data = self._note_outgoing(item.message)
                    try:
                        await host.send(data)
                    except _DISCONNECTED:
                        break  # kept in pending when it was a request: re-sent to the next host
                else:
                    self._client_gone = True
                    # A client may send its last request and close its side at once (a script
                    # piping requests in): its answers still go out, within a bound.
                    if self._pending:
                        with anyio.move_on_after(DRAIN_S):
                            await self._answered.wait()
                tg.cancel_scope.cancel()

            async def from_host() -> None:
                buffered = BufferedByteReceiveStream(host)
                while True:
                    try:
                        line = await buffered.receive_until(b"\n", MAX_MESSAGE_BYTES)
                    except _DISCONNECTED:
                        break
                    message = self._note_incoming(line)
                    if message is None:
                        continue
                    await self._client_out.send(SessionMessage(message))
                    self._forget_answered(message)
                tg.cancel_scope.cancel()

            tg.start_soon(from_client)
            tg.start_soon(from_host)

    def _forget_answered(self, message: types.JSONRPCMessage) -> None:
        # Only once handed to the client's stream: the stdio writer writes everything it
        # was handed before the process exits, so a drained relay has lost no answer.
        if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) and message.id is not None:
            self._pending.pop(message.id, None)
            if self._client_gone and not self._pending:
                self._answered.set()

    def _note_outgoing(self, message: types.JSONRPCMessage) -> bytes:
        data = message.model_dump_json(by_alias=True, exclude_unset=True).encode() + b"\n"
        if isinstance(message, types.JSONRPCRequest):
            self._pending[message.id] = data
            if message.method == "initialize":
                self._handshake.append(json.loads(data))
        elif isinstance(message, types.JSONRPCNotification) and message.method == "notifications/initialized":
            self._handshake.append(json.loads(data))
        return data

    def _note_incoming(self, line: bytes) -> types.JSONRPCMessage | None:
        """The host's message for the client; None for the answer to a replayed handshake."""
        message = types.jsonrpc_message_adapter.validate_json(line, by_name=False)
        answer_id = message.id if isinstance(message, types.JSONRPCResponse | types.JSONRPCError) else None
        replayed = isinstance(answer_id, str) and answer_id.startswith(_REPLAY_ID_PREFIX)
        return None if replayed else message


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":")).encode() + b"\n"
