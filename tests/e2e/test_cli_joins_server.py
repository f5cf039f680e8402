"""Every store command works while a server holds the store, and prints what it prints without one."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import anyio
import pytest
from anyio.abc import ByteReceiveStream
from mcp import Client

from tests.e2e.cli_runs import (
    FACT,
    copy_store,
    every_command,
    export_body,
    hybrid_memory,
    no_weights,
    seed,
)
from tests.e2e.many_clients import stdio_params
from tests.e2e.servers import INITIALIZE, http_server, serve_command, server_env
from tests.tools.helpers import call

pytestmark = [pytest.mark.subprocess, pytest.mark.model]


@asynccontextmanager
async def serving(transport: str, data_dir: Path) -> AsyncIterator[Client]:
    """A real ``hybrid-memory serve`` on ``data_dir`` holding the store, and a client of it."""
    if transport == "stdio":
        async with Client(stdio_params(data_dir)) as client:
            yield client
        return
    with http_server(data_dir) as server:
        async with Client(server.url) as client:
            yield client


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_each_command_joins_a_running_server_and_prints_what_it_prints_alone(
    tmp_path: Path, transport: str
) -> None:
    alone_dir, served_dir = tmp_path / "alone", tmp_path / "served"
    with anyio.fail_after(600):
        async with Client(stdio_params(alone_dir)) as client:
            await seed(client)
        copy_store(alone_dir, served_dir)

        alone = await anyio.to_thread.run_sync(every_command, alone_dir, tmp_path / "out-alone")
        async with serving(transport, served_dir) as client:
            before = await call(client, "memory_stats")
            # The command's own model would fail to load, and its own stores to open: it must join.
            joined = await anyio.to_thread.run_sync(
                lambda: every_command(
                    served_dir,
                    tmp_path / "out-joined",
                    HYBRID_MEMORY_EMBEDDING_MODEL_PATH=str(no_weights(tmp_path)),
                )
            )
            after = await call(client, "memory_stats")
            seen = await call(client, "recall_memory", query="who keeps the lighthouse?")

    assert {name: run.code for name, run in joined.items()} == dict.fromkeys(joined, 0), {
        name: run.stderr for name, run in joined.items() if run.code
    }
    for name, run in alone.items():
        assert run.code == 0, (name, run.stderr)
        expected = run.stdout.replace(str(tmp_path / "out-alone"), str(tmp_path / "out-joined"))
        if name == "recall-json":  # its scores carry recency, which moves on between the two runs
            assert scoreless(json.loads(joined[name].stdout)) == scoreless(json.loads(expected))
        else:
            assert joined[name].stdout == expected, name
    assert json.loads(joined["stats"].stdout)["items"] == before["items"] == after["items"] == 5
    assert joined["recall"].stdout.startswith("[memory:")
    assert "Ines keeps the lighthouse." in joined["recall"].stdout
    assert "results" in json.loads(joined["recall-json"].stdout)
    assert joined["graph"].stderr.endswith("(2 notes)\n")
    for name in ("export.jsonl", "all.jsonl"):
        assert export_body(tmp_path / "out-joined" / name) == export_body(tmp_path / "out-alone" / name)
    picture = (tmp_path / "out-joined" / "graph.html").read_text()
    assert picture == (tmp_path / "out-alone" / "graph.html").read_text()
    assert seen["results"][0]["text"] in (FACT, "Ines keeps the lighthouse.")


async def test_an_export_taken_while_the_server_runs_round_trips(tmp_path: Path) -> None:
    served, copy = tmp_path / "served", tmp_path / "copy"
    taken, again = tmp_path / "while-serving.jsonl", tmp_path / "copy.jsonl"
    with anyio.fail_after(600):
        async with Client(stdio_params(served)) as client:
            await seed(client)
            exported = await anyio.to_thread.run_sync(
                hybrid_memory, served, "export", str(taken), "--with-embeddings"
            )
            refused = await anyio.to_thread.run_sync(bad_call, served)
            imports = await anyio.to_thread.run_sync(
                lambda: hybrid_memory(served, "stats", PYTHONPROFILEIMPORTTIME="1")
            )
            await call(client, "create_note", content="Written after the export.", type="fact")
        imported = await anyio.to_thread.run_sync(hybrid_memory, copy, "import", str(taken), "--quiet")
        exported_again = await anyio.to_thread.run_sync(
            hybrid_memory, copy, "export", str(again), "--with-embeddings"
        )

    assert exported.code == 0, exported.stderr
    assert exported.stdout == f"exported 5 memories, 2 notes, 1 links from 1 scope(s) to {taken}\n"
    assert imported.code == 0, imported.stderr
    assert imported.stdout.endswith("; 0 memories embedded, 0 notes indexed\n"), imported.stdout
    assert exported_again.code == 0, exported_again.stderr
    assert export_body(again) == export_body(taken)
    assert refused["error"]["data"] == {"exit": 1}
    assert refused["error"]["message"].startswith("unexpected error (KeyError: 'command')")
    # Joined, a command imports neither pydantic (the settings) nor the stores, the model or mcp.
    assert imports.code == 0, imports.stderr
    imported = {line.split("|")[-1].strip() for line in imports.stderr.splitlines() if "|" in line}
    assert "hybrid_memory.host.join" in imported
    assert {
        "pydantic",
        "hybrid_memory.settings",
        "hybrid_memory.backends",
        "mcp",
        "onnxruntime",
    } & imported == set()


async def test_the_progress_of_an_export_the_server_does_is_drawn_on_the_commands_terminal(
    tmp_path: Path,
) -> None:
    served = tmp_path / "served"
    with anyio.fail_after(300):
        async with Client(stdio_params(served)) as client:
            await seed(client)
            drawn, summary = await anyio.to_thread.run_sync(
                with_terminal_stderr, served, ["export", str(tmp_path / "out.jsonl")]
            )
            quiet, _ = await anyio.to_thread.run_sync(
                with_terminal_stderr, served, ["export", str(tmp_path / "out.jsonl"), "--quiet"]
            )

    assert summary.startswith("exported 5 memories, 2 notes, 1 links")
    assert "\re2e: memories [##############################] 5/5\x1b[K" in drawn
    assert "\re2e: notes [##############################] 2/2\x1b[K" in drawn
    assert quiet == ""


def with_terminal_stderr(data_dir: Path, args: list[str]) -> tuple[str, str]:
    """``hybrid-memory ARGS`` with its stderr on a pseudo-terminal: what was drawn there, and stdout."""
    terminal, child_side = os.openpty()
    try:
        try:
            done = subprocess.run(
                [sys.executable, "-m", "hybrid_memory", *args],
                env=server_env(data_dir),
                stdout=subprocess.PIPE,
                stderr=child_side,
                timeout=120,
                check=True,
            )
        finally:
            os.close(child_side)
        drawn = b""
        while True:
            try:
                chunk = os.read(terminal, 65536)
            except OSError:  # EIO: the child's side is closed and everything was read
                break
            if not chunk:
                break
            drawn += chunk
    finally:
        os.close(terminal)
    return drawn.decode().replace("\r\n", "\n"), done.stdout.decode()


MEMORY_JSONL = [
    {"type": "entity", "name": "Ines", "entityType": "person", "observations": [FACT]},
    {"type": "entity", "name": "Lighthouse", "entityType": "place", "observations": ["Built in 1872."]},
    {"type": "relation", "from": "Ines", "to": "Lighthouse", "relationType": "keeps"},
]


async def test_a_server_that_starts_while_a_command_holds_the_store_waits_for_it(tmp_path: Path) -> None:
    """No server runs, so ``import`` holds the store; a ``serve`` started then waits, then serves."""
    data_dir = tmp_path / "data"
    fifo = tmp_path / "memory.jsonl"
    os.mkfifo(fifo)
    # A memory.jsonl is read once, whole, before the stores open: the FIFO holds the import there.
    importing = [sys.executable, "-m", "hybrid_memory", "import", str(fifo), "--format", "mcp-memory"]

    with anyio.fail_after(300):
        async with await anyio.open_process(importing, env=server_env(data_dir)) as importer:
            # It takes the host lock before it reads its file: once it has opened the FIFO, it holds it.
            writer = await anyio.to_thread.run_sync(lambda: fifo.open("w"))
            async with await anyio.open_process(serve_command(), env=server_env(data_dir)) as server:
                assert server.stdin is not None
                assert server.stdout is not None
                assert server.stderr is not None
                await server.stdin.send(json_lines(INITIALIZE))
                await read_until(server.stderr, b"waiting for hybrid-memory import")
                await anyio.to_thread.run_sync(write_and_close, writer, json_lines(*MEMORY_JSONL).decode())
                assert await importer.wait() == 0
                assert importer.stdout is not None
                imported = b"".join([chunk async for chunk in importer.stdout]).decode()
                stats = {"name": "memory_stats", "arguments": {}}
                await server.stdin.send(
                    json_lines(
                        {"jsonrpc": "2.0", "method": "notifications/initialized"},
                        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": stats},
                    )
                )
                answers = await read_answers(server.stdout, count=2)
                await server.stdin.aclose()
                assert await server.wait() == 0

    assert "(mcp-memory): 0 memories, 4 notes, 3 links; written 0/4/3" in imported
    assert answers[1]["result"]["serverInfo"]["name"] == "hybrid-memory"
    assert answers[2]["result"]["structuredContent"]["items"] == 4


def bad_call(data_dir: Path) -> Any:
    """A command call without its command, straight on the socket: the server answers, and serves on."""
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(str(data_dir / "serve.sock"))
        sock.sendall(json_lines({"jsonrpc": "2.0", "id": 1, "method": "hybrid-memory/command", "params": {}}))
        with sock.makefile("rb") as answers:
            return json.loads(answers.readline())


def scoreless(data: Any) -> Any:
    """``data`` without its floating point numbers."""
    if isinstance(data, dict):
        return {k: scoreless(v) for k, v in data.items() if not isinstance(v, float)}
    if isinstance(data, list):
        return [scoreless(v) for v in data if not isinstance(v, float)]
    return data


async def test_a_command_whose_server_is_killed_mid_command_runs_it_itself(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    fifo = tmp_path / "memory.jsonl"
    os.mkfifo(fifo)
    importing = [sys.executable, "-m", "hybrid_memory", "import", str(fifo), "--format", "mcp-memory"]

    with anyio.fail_after(300):
        async with await anyio.open_process(serve_command(), env=server_env(data_dir)) as server:
            assert server.stdin is not None
            assert server.stdout is not None
            assert server.stderr is not None
            await server.stdin.send(json_lines(INITIALIZE))
            await read_answers(server.stdout, count=1)  # it holds the store and listens
            async with await anyio.open_process(importing, env=server_env(data_dir)) as importer:
                # Joined, the server runs the import: it waits there for the FIFO's writer, which never comes.
                await read_until(server.stderr, b"running `hybrid-memory import` for a command that joined")
                server.kill()
                await server.wait()
                # The command finds no server left, holds the store itself and opens the file again:
                # the only reader left for this writer.
                writer = await anyio.to_thread.run_sync(lambda: fifo.open("w"))
                await anyio.to_thread.run_sync(write_and_close, writer, json_lines(*MEMORY_JSONL).decode())
                assert await importer.wait() == 0
                assert importer.stdout is not None
                imported = b"".join([chunk async for chunk in importer.stdout]).decode()
        stats = await anyio.to_thread.run_sync(hybrid_memory, data_dir, "stats")

    assert "(mcp-memory): 0 memories, 4 notes, 3 links; written 0/4/3" in imported
    assert json.loads(stats.stdout)["items"] == 4


def json_lines(*messages: dict[str, Any]) -> bytes:
    return "".join(json.dumps(message) + "\n" for message in messages).encode()


def write_and_close(writer: TextIO, text: str) -> None:
    with writer:
        writer.write(text)


async def read_until(stream: ByteReceiveStream, wanted: bytes) -> bytes:
    seen = b""
    async for chunk in stream:
        seen += chunk
        if wanted in seen:
            return seen
    raise AssertionError(f"{wanted!r} never came: {seen.decode()[-2000:]}")


async def read_answers(stream: ByteReceiveStream, count: int) -> dict[int, Any]:
    answers: dict[int, Any] = {}
    pending = b""
    async for chunk in stream:
        *lines, pending = (pending + chunk).split(b"\n")
        for line in lines:
            message = json.loads(line)
            answers[message["id"]] = message
        if len(answers) >= count:
            return answers
    raise AssertionError(f"the server answered only {sorted(answers)}")
