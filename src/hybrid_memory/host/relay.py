"""A client's session relayed to the host and back, surviving a change of host: the state, without I/O.

The relay remembers the client's handshake (``initialize`` and ``notifications/initialized``)
and every request not answered yet. When the connection to the host ends while the
client is still there, it connects again (to the next host, perhaps itself), replays
the handshake (answering nothing: the client already has its answer) and re-sends the
unanswered requests. A write re-sent after its host had already done it is harmless:
messages are stored under deterministic ids and a repeated note comes back as the
near-duplicate it is.

Two loops drive it: :mod:`.stdio_relay` with the standard library (the plugin's server,
which must start fast) and :mod:`.async_relay` with anyio (a ``serve`` that may host).
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from hybrid_memory.host.wire import REPLAY_ID_PREFIX, line
from hybrid_memory.projects import PROJECT_META


class ToClient(NamedTuple):
    line: bytes
    """The host's message, framed, for the client."""
    answers: Any
    """The id of the client's request it answers, or None (a notification, a request of the host's)."""
    message: Any = None
    """The message parsed (as JSON), for a relay that hands it on as an object."""


class RelayState:
    """The handshake and the requests in flight of one client; not thread-safe (the caller locks)."""

    def __init__(self, project: str | None = None) -> None:
        """``project``: the relaying server's configured project; None when its client's roots decide."""
        self._project = project
        self._handshake: list[dict[str, Any]] = []
        self._pending: dict[Any, bytes] = {}
        """Client requests sent to a host and not answered yet, in the order sent."""
        self._replays = 0
        self.client_gone = False
        """Set once the client closed its side: what is pending is still answered."""

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    @property
    def done(self) -> bool:
        """The client has left and has every answer it asked for."""
        return self.client_gone and not self._pending

    def to_host(self, data: bytes) -> bytes | None:
        """The client's message framed for the host, remembered when a request; None when malformed."""
        try:
            message = json.loads(data)
        except ValueError:
            return None
        framed = data.rstrip(b"\r\n") + b"\n"
        method = message.get("method") if isinstance(message, dict) else None
        if method is not None and "id" in message:
            # Every request says which project this server is configured with (None: its client's
            # roots decide), so the host scopes it as this server would have, whoever hosts.
            given = message.get("params")
            params = given if isinstance(given, dict) else {}
            given_meta = params.get("_meta")
            meta = given_meta if isinstance(given_meta, dict) else {}
            message = {**message, "params": {**params, "_meta": {**meta, PROJECT_META: self._project}}}
            framed = line(message)
        if method is not None:
            if "id" in message:
                self._pending[message["id"]] = framed
            if method in ("initialize", "notifications/initialized"):
                self._handshake.append(message)
        return framed

    def to_client(self, data: bytes) -> ToClient | None:
        """The host's message for the client; None for the answer to a replayed handshake (or no JSON)."""
        try:
            message = json.loads(data)
        except ValueError:
            return None
        answers = message.get("id") if isinstance(message, dict) and "method" not in message else None
        if isinstance(answers, str) and answers.startswith(REPLAY_ID_PREFIX):
            return None
        return ToClient(data.rstrip(b"\r\n") + b"\n", answers, message)

    def delivered(self, answers: Any) -> None:
        """The answer to request ``answers`` is in the client's hands: it is not re-sent."""
        if answers is not None:
            self._pending.pop(answers, None)

    def abandon(self) -> None:
        """No host can be reached: nothing pending will be answered, and the relay ends."""
        self.client_gone = True
        self._pending.clear()

    def replay(self) -> list[bytes]:
        """What a new host is sent first: the handshake (its request under a new id), then what is pending."""
        lines = []
        for message in self._handshake:
            if "id" in message:
                self._replays += 1
                message = {**message, "id": f"{REPLAY_ID_PREFIX}{self._replays}"}
            lines.append(line(message))
        return lines + list(self._pending.values())
