"""The relay's state, as both relays drive it: what a new host is sent, what the client sees."""

from __future__ import annotations

import json

from hybrid_memory.host.relay import RelayState
from hybrid_memory.host.wire import REPLAY_ID_PREFIX
from hybrid_memory.projects import PROJECT_META

INITIALIZE = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def line(message: dict[str, object]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def stamped(message: dict[str, object], project: str | None = None) -> dict[str, object]:
    """A request as the host receives it from a server configured with ``project``."""
    params = message.get("params") or {}
    return {**message, "params": {**params, "_meta": {PROJECT_META: project}}}  # type: ignore[dict-item]


def started() -> RelayState:
    state = RelayState()
    sent = state.to_host(line(INITIALIZE))
    assert sent is not None
    assert json.loads(sent) == stamped(INITIALIZE)
    assert state.to_host(line(INITIALIZED)) == line(INITIALIZED)
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
        {**stamped(INITIALIZE), "id": f"{REPLAY_ID_PREFIX}1"},
        INITIALIZED,
        stamped(call),
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


def test_every_request_tells_the_host_the_relaying_servers_project_and_so_does_its_replay() -> None:
    state = RelayState("garden")
    call = {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"_meta": {"progressToken": 3}}}
    sent = state.to_host(line(call))
    assert sent is not None
    assert json.loads(sent)["params"]["_meta"] == {"progressToken": 3, PROJECT_META: "garden"}
    listing = state.to_host(line({"jsonrpc": "2.0", "id": 5, "method": "tools/list"}))
    assert listing is not None
    assert json.loads(listing)["params"] == {"_meta": {PROJECT_META: "garden"}}
    assert state.to_host(line(INITIALIZED)) == line(INITIALIZED)  # a notification goes as it came
    requests = [json.loads(data) for data in state.replay() if b'"id"' in data]
    assert [r["params"]["_meta"][PROJECT_META] for r in requests] == ["garden", "garden"]
