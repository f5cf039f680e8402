"""What the anyio relay hands the client's stdio writer: the host's messages, written out unchanged."""

from __future__ import annotations

import json

import pytest

from hybrid_memory.host.async_relay import _for_client
from hybrid_memory.host.relay import RelayState

ANSWER = {
    "jsonrpc": "2.0",
    "id": 4,
    "result": {
        "content": [{"type": "text", "text": "ferry at nine [memory:m1]"}],
        "structuredContent": {"query": "ferry", "results": [{"id": "m1", "note_type": None}]},
        "isError": False,
    },
}


@pytest.mark.parametrize(
    "message",
    [
        ANSWER,
        {"jsonrpc": "2.0", "id": "r-2", "result": {}},
        {"jsonrpc": "2.0", "id": 5, "error": {"code": -32602, "message": "No prompt 'x'."}},
        {"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info", "data": "hi"}},
        {"jsonrpc": "2.0", "id": 9, "method": "roots/list"},
    ],
)
def test_a_host_message_reaches_the_client_as_the_host_wrote_it(message: dict[str, object]) -> None:
    out = RelayState().to_client(json.dumps(message).encode() + b"\n")
    assert out is not None

    written = _for_client(out).model_dump_json(by_alias=True, exclude_unset=True)

    assert json.loads(written) == message
