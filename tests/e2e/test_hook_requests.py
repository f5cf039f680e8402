"""What a hook asks the host, counted on the wire: a proxy on ``serve.sock`` between real hook
processes and a real host.

A prompt hook, a session-start hook and a capture hook each send one request and no MCP handshake:
the host builds the text to inject, and reads and stores what a transcript gained, where the memory
lives.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hybrid_memory.host.lock import socket_path
from tests.e2e.claude_code import hook_env, host_pids, message_counts, stop_hosts

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

HOOK = Path(sys.executable).parent / "hybrid-memory"
HANDSHAKE = {"initialize"}


class RequestCounter:
    """Listens on ``path`` and relays each connection to ``target``, keeping the methods of the
    requests each connection sent (JSON-RPC lines with an id and a method)."""

    def __init__(self, path: Path, target: Path) -> None:
        self.connections: list[list[str]] = []
        self._sockets: list[socket.socket] = []
        self._target = target
        self._listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._listener.bind(str(path))
        self._listener.listen()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)
        self._listener.close()
        self._thread.join(timeout=10)
        for sock in self._sockets:
            sock.close()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            upstream = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            upstream.connect(str(self._target))
            self._sockets += [client, upstream]
            methods: list[str] = []
            self.connections.append(methods)
            threading.Thread(target=self._pump, args=(client, upstream, methods), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, None), daemon=True).start()

    @staticmethod
    def _pump(source: socket.socket, sink: socket.socket, methods: list[str] | None) -> None:
        buffer = b""
        with contextlib.suppress(OSError):
            while chunk := source.recv(1 << 16):
                sink.sendall(chunk)
                if methods is None:
                    continue
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    message = json.loads(line)
                    if "method" in message and "id" in message:
                        methods.append(message["method"])
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def _hook(event: str, payload: dict[str, Any], data_dir: Path, **env: str) -> dict[str, Any] | None:
    done = subprocess.run(
        [str(HOOK), "hook", event],
        input=json.dumps(payload),
        env=hook_env(data_dir, **env),
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stderr == ""
    return json.loads(done.stdout) if done.stdout else None


def _said(transcript: Path, cwd: Path, said: list[tuple[str, str]], first: int = 0) -> dict[str, str]:
    """``said`` written to the session's transcript (after its first ``first`` entries); its Stop payload."""
    rows = [
        {
            "type": role,
            "uuid": f"s1000000-0000-4000-8000-{first + i:012d}",
            "timestamp": f"2026-11-20T10:00:{first + i:02d}.000Z",
            "cwd": str(cwd),
            "sessionId": "s1",
            "message": {"role": role, "content": text},
        }
        for i, (role, text) in enumerate(said)
    ]
    with transcript.open("a") as f:
        f.writelines(json.dumps(r) + "\n" for r in rows)
    return {"session_id": "s1", "transcript_path": str(transcript), "cwd": str(cwd)}


def _captured_session(tmp_path: Path, cwd: Path, data_dir: Path) -> None:
    said = [
        ("user", "Which database do invoices live in? We keep them in Postgres 16, never MySQL."),
        ("assistant", "Invoices live in Postgres 16; the archive job moves them after 400 days."),
    ]
    payload = _said(tmp_path / "s1.jsonl", cwd, said)
    _hook("session-end", payload, data_dir, HYBRID_MEMORY_HOOK_DETACH="0")


def test_a_prompt_hook_a_session_start_hook_and_a_capture_hook_each_send_one_request(
    tmp_path: Path, data_dir: Path
) -> None:
    cwd = tmp_path / "ledger"
    cwd.mkdir()
    _captured_session(tmp_path, cwd, data_dir)  # starts the host, fills the store
    [host] = host_pids(data_dir)
    served = Path(socket_path(data_dir))
    hidden = served.with_name("host-behind-proxy.sock")
    os.replace(served, hidden)  # the host still listens there; hooks now reach it through the proxy
    counter = RequestCounter(served, hidden)
    try:
        prompt = {"session_id": "s2", "cwd": str(cwd), "prompt": "Which database do the invoices live in?"}
        injected = _hook("user-prompt-submit", prompt, data_dir)
        started = _hook("session-start", {"session_id": "s2", "cwd": str(cwd), "source": "startup"}, data_dir)
        turn = [("user", "Do the refunds live there too?"), ("assistant", "Refunds live in Postgres 16 too.")]
        stop = _said(tmp_path / "s1.jsonl", cwd, turn, first=2)
        _hook("stop", stop, data_dir, HYBRID_MEMORY_HOOK_DETACH="0")
    finally:
        counter.close()
        os.replace(hidden, served)
    assert host_pids(data_dir) == [host]  # the one host answered both
    assert injected is not None
    assert "Postgres 16" in injected["hookSpecificOutput"]["additionalContext"]
    assert started is not None
    assert "[memory:" in started["hookSpecificOutput"]["additionalContext"]
    beyond_handshake = [[m for m in methods if m not in HANDSHAKE] for methods in counter.connections]
    assert beyond_handshake == [["hybrid-memory/inject"], ["hybrid-memory/inject"], ["hybrid-memory/capture"]]
    assert all(HANDSHAKE.isdisjoint(methods) for methods in counter.connections)  # no MCP session either
    assert message_counts(data_dir, cwd) == {"s1": 4}  # the capture stored the new turn
