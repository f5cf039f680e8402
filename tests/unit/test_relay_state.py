"""The relay's state, as both relays drive it: what a new host is sent, what the client sees."""

from __future__ import annotations

import json

from hybrid_memory.host.relay import RelayState
from hybrid_memory.host.wire import REPLAY_ID_PREFIX

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def started() -> RelayState:
    state = RelayState()
    for message in (INITIALIZE, INITIALIZED):
        assert state.to_host(line(message)) == line(message)
    answer = state.to_client(line({"jsonrpc": "2.0", "id": 0, "result": {}}))
    assert answer is not None
    assert answer.answers == 0
    state.delivered(answer.answers)
    return state


def test_a_new_host_gets_the_handshake_under_a_new_id_then_the_requests_not_answered() -> None:
    state = started()
    call = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "memory_stats"}}
    answered = {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}
    state.to_host(line(call))
    state.to_host(line(answered))
    reply = state.to_client(line({"jsonrpc": "2.0", "id": 8, "result": {"tools": []}}))
    assert reply is not None
    state.delivered(reply.answers)

    replayed = [json.loads(data) for data in state.replay()]

    assert replayed == [
        {**INITIALIZE, "id": f"{REPLAY_ID_PREFIX}1"},
        INITIALIZED,
        call,
    ]
    assert json.loads(state.replay()[0])["id"] == f"{REPLAY_ID_PREFIX}2"  # each replay its own id


def test_the_answer_to_a_replayed_handshake_never_reaches_the_client() -> None:
    state = started()
    state.replay()
    assert state.to_client(line({"jsonrpc": "2.0", "id": f"{REPLAY_ID_PREFIX}1", "result": {}})) is None
    note = state.to_client(line({"jsonrpc": "2.0", "method": "notifications/message", "params": {}}))
    assert note is not None
    assert note.answers is None


def test_a_client_that_left_is_done_once_every_request_it_sent_is_answered() -> None:
    state = started()
    state.to_host(line({"jsonrpc": "2.0", "id": "r1", "method": "tools/call", "params": {}}))
    state.client_gone = True
    assert state.pending
    assert not state.done
    state.delivered("r1")
    assert state.done


def test_a_malformed_message_is_dropped_and_no_host_left_means_nothing_pending() -> None:
    state = started()
    assert state.to_host(b"{not json\n") is None
    state.to_host(line({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {}}))
    state.abandon()
    assert state.done
