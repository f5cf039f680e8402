"""``serve --detached-host`` (the plugin's MCP server): a light relay to a headless host that outlives it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from hybrid_memory.host.client import connect
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


def _headless(data_dir: Path, *args: str, stderr: int = subprocess.DEVNULL) -> subprocess.Popen[bytes]:
    """``hybrid-memory serve --headless`` on ``data_dir`` (with ``args``), started as a hook starts one."""
    return subprocess.Popen(
        [COMMAND, "serve", "--headless", *args, "--data-dir", str(data_dir)],
        env=server_env(data_dir),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=stderr,
    )


def test_a_headless_host_exits_once_no_client_has_connected_for_its_idle_period(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    host = _headless(data_dir, "--idle-exit", "1", stderr=subprocess.PIPE)
    try:
        with connect(data_dir, tmp_path, timeout_s=60, start=False) as client:
            stats = client.call_tool("memory_stats", {})
        assert host.poll() is None  # a session kept it; now none does
        _, stderr = host.communicate(timeout=60)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
    assert host.returncode == 0, stderr.decode()[-1000:]
    assert "no client for 1 s: the headless host exits" in stderr.decode()
    assert stats["items"] == 0
    assert host_pids(data_dir) == []


def test_a_headless_host_started_while_another_hosts_ends_before_it_loads_the_server(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    first = _headless(data_dir)
    try:
        with connect(data_dir, tmp_path, timeout_s=120, start=False) as client:
            client.call_tool("memory_stats", {})
            # What a client that found no host starts, run as the entry point runs it; it reports which
            # of the server's modules it loaded before it ended.
            second = subprocess.run(
                [
                    sys.executable,
                    "-c",
                    "import sys; from hybrid_memory._entry import main; code = main(); print(code, "
                    "sorted(m for m in ('mcp', 'pydantic', 'hybrid_memory.cli') if m in sys.modules))",
                    "serve",
                    "--headless",
                    "--data-dir",
                    str(data_dir),
                ],
                env=server_env(data_dir),
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            )
            assert client.call_tool("memory_stats", {})["items"] == 0  # the first host answers on
        assert second.stdout.strip() == "0 []", second.stderr
        assert second.stderr.strip() == f"another process already hosts the memory store in {data_dir}"
        assert host_pids(data_dir) == [first.pid]
    finally:
        stop_hosts(data_dir)
        first.wait(60)
