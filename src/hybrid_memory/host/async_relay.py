"""A stdio client's session relayed to the host's socket with anyio, for a ``serve`` that may host itself.

The relay's state (handshake, requests in flight, replay) is :mod:`.relay`'s; this drives
it between the SDK's stdio streams and a host connection made by ``connect``.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
import anyio.abc
import mcp_types as types
from anyio.streams.buffered import BufferedByteReceiveStream
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage

from hybrid_memory.host.relay import RelayState, ToClient
from hybrid_memory.host.wire import DRAIN_S, MAX_MESSAGE_BYTES

logger = logging.getLogger(__name__)

_DISCONNECTED = (
    anyio.EndOfStream,
    anyio.IncompleteRead,
    anyio.BrokenResourceError,
    anyio.ClosedResourceError,
)


class AsyncRelay:
    """Relays one client's session to a host connection made by ``connect``, reconnecting as needed."""

    def __init__(
        self,
        client_in: ReadStream[SessionMessage | Exception],
        client_out: WriteStream[SessionMessage],
        project: str | None = None,
    ) -> None:
        self._client_in = client_in
        self._client_out = client_out
        self._state = RelayState(project)
        self._answered = anyio.Event()
        """Set once the client has left and every request it sent is answered."""

    async def run(self, connect: Callable[[], Awaitable[anyio.abc.ByteStream]]) -> None:
        """Relay until the client closes its side."""
        host = await connect()
        while True:
            await self._pump(host)
            if self._state.client_gone:
                return
            logger.info("the shared memory server went away; joining the next one")
            host = await connect()
            for data in self._state.replay():
                await host.send(data)

    async def _pump(self, host: anyio.abc.ByteStream) -> None:
        """Relay both ways until the client or the host ends; the host connection is closed after."""
        async with host, anyio.create_task_group() as tg:

            async def from_client() -> None:
                async for item in self._client_in:
                    if isinstance(item, Exception):
                        logger.warning("dropped a malformed message from the client: %s", item)
                        continue
                    data = self._state.to_host(
                        item.message.model_dump_json(by_alias=True, exclude_unset=True).encode()
                    )
                    if data is None:
                        continue
                    try:
                        await host.send(data)
                    except _DISCONNECTED:
                        break  # kept in pending when it was a request: re-sent to the next host
                else:
                    self._state.client_gone = True
                    # A client may send its last request and close its side at once (a script
                    # piping requests in): its answers still go out, within a bound.
                    if self._state.pending:
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
                    out = self._state.to_client(line)
                    if out is None:
                        continue
                    await self._client_out.send(SessionMessage(_for_client(out)))
                    # Only once handed to the client's stream: the stdio writer writes everything it
                    # was handed before the process exits, so a drained relay has lost no answer.
                    self._state.delivered(out.answers)
                    if self._state.done:
                        self._answered.set()
                tg.cancel_scope.cancel()

            tg.start_soon(from_client)
            tg.start_soon(from_host)


def _for_client(out: ToClient) -> types.JSONRPCMessage:
    """The host's message as the SDK's stdio writer takes it.

    An answer is taken as the host's SDK wrote it, from a result it had validated, instead of
    being validated again here: a recall's answer (5 KB) took a third of a millisecond to
    validate, and the writer only writes it out again.
    """
    message = out.message
    if isinstance(message, dict) and "method" not in message and isinstance(message.get("result"), dict):
        return types.JSONRPCResponse.model_construct(**message)
    return types.jsonrpc_message_adapter.validate_json(out.line, by_name=False)
