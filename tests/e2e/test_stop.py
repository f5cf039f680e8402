"""A stop costs no time: a closed stdin or SIGTERM ends the server without an index build,
after answering what was in flight."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from hybrid_memory.backends._edge_host import OPTIMIZE_AFTER_POINTS
from tests.e2e.many_clients import ClientReport, lost_writes
from tests.e2e.servers import handshake, send, serve_command, server_env

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

BATCH = 100


async def test_closing_stdin_after_back_to_back_writes_builds_no_index_on_the_way_out(tmp_path: Path) -> None:
    data_dir, log = tmp_path / "data", tmp_path / "server.log"
    calls = OPTIMIZE_AFTER_POINTS // BATCH + 1  # enough that an index build is due
    with anyio.fail_after(300), log.open("wb") as stderr:
        async with await anyio.open_process(
            serve_command(), env=server_env(data_dir), stderr=stderr
        ) as server:
            assert server.stdin is not None
            replies = await handshake(server)
            stored = 0
            for k in range(calls):
                messages = [
                    {
                        "role": "user",
                        "id": f"m{i}",
                        "content": f"Batch {k}, line {i}: the kiln reached {900 + i} C.",
                    }
                    for i in range(BATCH)
                ]
                arguments = {"thread_id": f"batch-{k}", "messages": messages}
                params = {"name": "remember_thread", "arguments": arguments}
                await send(server, {"id": 10 + k, "method": "tools/call", "params": params})
                reply = json.loads(await replies.receive_until(b"\n", 1 << 24))
                assert reply["id"] == 10 + k
                assert not reply["result"].get("isError"), reply
                stored += reply["result"]["structuredContent"]["stored"]
            await server.stdin.aclose()
            assert await server.wait() == 0

    assert stored == calls * BATCH >= OPTIMIZE_AFTER_POINTS
    written = log.read_text()
    assert "optimized" not in written, written[-2000:]
    assert list(data_dir.glob("**/temp_segments/*")) == []


async def test_sigterm_answers_what_is_in_flight_and_exits_cleanly(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    calls = 6
    answered: dict[int, dict[str, Any]] = {}
    with anyio.fail_after(240):
        async with await anyio.open_process(
            serve_command(), env=server_env(data_dir), stderr=subprocess.DEVNULL
        ) as server:
            replies = await handshake(server)
            for k in range(calls):
                messages = [{"role": "user", "id": "m", "content": f"Shelf {k} holds the blue binders."}]
                params = {
                    "name": "remember_thread",
                    "arguments": {"thread_id": f"t{k}", "messages": messages},
                }
                await send(server, {"id": 10 + k, "method": "tools/call", "params": params})
            first = json.loads(await replies.receive_until(b"\n", 1 << 24))
            answered[first["id"]] = first
            server.terminate()  # the others are in flight, or not yet read
            while True:
                try:
                    reply = json.loads(await replies.receive_until(b"\n", 1 << 24))
                except (anyio.EndOfStream, anyio.IncompleteRead):
                    break
                answered[reply["id"]] = reply
            assert await server.wait() == 0

    report = ClientReport()
    for reply in answered.values():
        assert not reply["result"].get("isError"), reply
        report.memory_ids.extend(reply["result"]["structuredContent"]["memory_ids"])
    assert 1 <= len(report.memory_ids) <= calls
    assert await lost_writes(data_dir, [report]) == []
