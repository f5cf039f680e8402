"""A stop costs no time: after back-to-back writes, a closed stdin ends the server without an index build."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from anyio.streams.buffered import BufferedByteReceiveStream

from hybrid_memory.backends._edge_host import OPTIMIZE_AFTER_POINTS
from tests.e2e.servers import INITIALIZE, serve_command, server_env

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

BATCH = 100


async def send(process: Process, message: dict[str, Any]) -> None:
    assert process.stdin is not None
    await process.stdin.send(json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n")


async def test_closing_stdin_after_back_to_back_writes_builds_no_index_on_the_way_out(tmp_path: Path) -> None:
    data_dir, log = tmp_path / "data", tmp_path / "server.log"
    calls = OPTIMIZE_AFTER_POINTS // BATCH + 1  # enough that an index build is due
    with anyio.fail_after(300), log.open("wb") as stderr:
        async with await anyio.open_process(
            serve_command(), env=server_env(data_dir), stderr=stderr
        ) as server:
            assert server.stdout is not None
            assert server.stdin is not None
            replies = BufferedByteReceiveStream(server.stdout)
            await send(server, INITIALIZE)
            assert json.loads(await replies.receive_until(b"\n", 1 << 20))["id"] == 1
            await send(server, {"method": "notifications/initialized"})
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
