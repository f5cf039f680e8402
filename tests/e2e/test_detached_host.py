"""``serve --detached-host`` (the plugin's MCP server): a light relay to a headless host that outlives it."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.claude_code import host_pids, stop_hosts
from tests.e2e.servers import server_env
from tests.tools.helpers import call

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

COMMAND = str(Path(sys.executable).parent / "hybrid-memory")


def _params(data_dir: Path) -> StdioServerParameters:
    return StdioServerParameters(command=COMMAND, args=["serve", "--detached-host"], env=server_env(data_dir))


async def test_sessions_share_a_headless_host_that_outlives_them(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    message = {"role": "user", "id": "m1", "content": "The lighthouse keeper is called Ines."}
    try:
        with anyio.fail_after(180):
            async with Client(_params(data_dir)) as first:
                await call(first, "remember_thread", thread_id="first", messages=[message])
            hosts = host_pids(data_dir)
            async with Client(_params(data_dir)) as second:
                seen = await call(second, "recall_memory", query="who keeps the lighthouse?")
                tools = await second.list_tools()
        assert len(hosts) == 1
        assert host_pids(data_dir) == hosts  # the same host served both sessions
        assert seen["results"][0]["text"] == message["content"]
        assert "recall_memory" in {t.name for t in tools.tools}
    finally:
        stop_hosts(data_dir)


async def test_when_the_host_is_killed_the_relay_starts_another_and_the_session_goes_on(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    message = {"role": "user", "id": "m1", "content": "The ferry to Inis Mor leaves at nine."}
    try:
        with anyio.fail_after(240):
            async with Client(_params(data_dir)) as client:
                await call(client, "remember_thread", thread_id="t1", messages=[message])
                [killed] = host_pids(data_dir)
                os.kill(killed, signal.SIGKILL)
                after = await call(client, "recall_memory", query="when does the ferry leave?")
        assert host_pids(data_dir) not in ([], [killed])
        assert after["results"][0]["text"] == message["content"]  # written before the kill, still there
    finally:
        stop_hosts(data_dir)
