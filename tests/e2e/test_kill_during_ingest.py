"""``kill -9`` of a stdio server mid-ingest: every write it acknowledged is there after a restart."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.many_clients import ClientReport, lost_writes
from tests.e2e.servers import handshake, send, serve_command, server_env

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

WRITES = 40
KILL_AFTER = 15
"""Acknowledgements read before the kill; the other writes are in flight or not yet read."""


def write_call(k: int) -> dict[str, Any]:
    if k % 4 == 3:
        arguments: dict[str, Any] = {
            "content": f"Decision {k}: ship on Thursday.",
            "type": "decision",
            "force": True,
        }
        return {"id": k, "method": "tools/call", "params": {"name": "create_note", "arguments": arguments}}
    messages = [
        {"role": "user", "id": f"m{i}", "content": f"Write {k}, line {i}: the kiln is at 1240 C."}
        for i in range(3)
    ]
    arguments = {"thread_id": f"thread-{k}", "messages": messages}
    return {"id": k, "method": "tools/call", "params": {"name": "remember_thread", "arguments": arguments}}


async def test_kill_9_mid_ingest_loses_no_acknowledged_write(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    acknowledged = ClientReport()
    with anyio.fail_after(240):
        async with await anyio.open_process(
            serve_command(), env=server_env(data_dir), stderr=subprocess.DEVNULL
        ) as server:
            replies = await handshake(server)
            for k in range(WRITES):
                await send(server, write_call(k))
            while acknowledged.calls < KILL_AFTER:
                reply = json.loads(await replies.receive_until(b"\n", 1 << 24))
                result = reply["result"]
                assert not result.get("isError"), result
                acknowledged.calls += 1
                content = result["structuredContent"]
                if "memory_ids" in content:
                    acknowledged.memory_ids.extend(content["memory_ids"])
                else:
                    acknowledged.note_ids.append(content["id"])
            server.send_signal(signal.SIGKILL)
            assert await server.wait() == -signal.SIGKILL

        lost = await lost_writes(data_dir, [acknowledged])

    assert len(acknowledged.memory_ids) + len(acknowledged.note_ids) >= KILL_AFTER
    assert lost == []
