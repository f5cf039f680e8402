"""The server as a child process: its environment, a free port, and an HTTP server ready to call."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from tests.conftest import model_dir

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}
"""A client's first message, raw, for tests that speak JSON-RPC without an MCP client."""


async def send(process: Process, message: dict[str, Any]) -> None:
    """One JSON-RPC message to a stdio server's stdin (``jsonrpc`` added), newline-delimited."""
    assert process.stdin is not None
    await process.stdin.send(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")


async def handshake(process: Process) -> BufferedByteReceiveStream:
    """Initialize a stdio server spoken to in raw JSON-RPC; its replies, to read line by line."""
    assert process.stdout is not None
    replies = BufferedByteReceiveStream(process.stdout)
    await send(process, INITIALIZE)
    assert json.loads(await replies.receive_until(b"\n", 1 << 20))["id"] == INITIALIZE["id"]
    await send(process, {"method": "notifications/initialized"})
    return replies


READY = "listening on http://"
"""The line the server logs once its stores are open and its socket accepts."""
START_TIMEOUT_S = 60


def server_env(data_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HYBRID_MEMORY_", "QDRANT_", "NEO4J_"))}
    env.update(
        HYBRID_MEMORY_DATA_DIR=str(data_dir),
        HYBRID_MEMORY_PROJECT="e2e",
        HYBRID_MEMORY_EMBEDDING_MODEL_PATH=str(model_dir()),
    )
    env.update(extra)
    return env


def serve_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "hybrid_memory", "serve", *args]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class RunningServer:
    url: str
    port: int
    log: Path


def _copy_until_ready(stream: IO[bytes], log: Path, ready: threading.Event) -> None:
    """Keep draining the child's stderr into the log (a full pipe would block it); flag the ready line."""
    with log.open("ab") as out:
        for line in stream:
            out.write(line)
            out.flush()
            if READY.encode() in line:
                ready.set()


@contextmanager
def http_server(
    data_dir: Path,
    port: int | None = None,
    *,
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
) -> Iterator[RunningServer]:
    """``hybrid-memory serve --transport http`` as a child process, ready when it says so."""
    port = port or free_port()
    log = data_dir.parent / f"server-{port}.log"
    proc = subprocess.Popen(
        serve_command("--transport", "http", "--port", str(port), *args),
        env=server_env(data_dir, **(env or {})),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert proc.stderr is not None
    ready = threading.Event()
    copier = threading.Thread(target=_copy_until_ready, args=(proc.stderr, log, ready), daemon=True)
    copier.start()
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        # Bounded: the line comes, or the process ends (the copier then stops), or the time runs out.
        while not ready.wait(timeout=1):
            if proc.poll() is not None or not copier.is_alive():
                copier.join(timeout=5)
                raise AssertionError(f"server exited ({proc.returncode}): {log.read_text()}")
            if time.monotonic() > deadline:
                raise AssertionError(f"server not ready within {START_TIMEOUT_S} s: {log.read_text()}")
        yield RunningServer(url=f"http://127.0.0.1:{port}/mcp", port=port, log=log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        copier.join(timeout=5)
        proc.stderr.close()
