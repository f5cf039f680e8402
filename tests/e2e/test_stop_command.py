"""``hybrid-memory stop``: the data dir's host, asked over its socket to stop, closes and frees the store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from hybrid_memory.host import lock
from tests.e2e.claude_code import host_pids, stop_hosts
from tests.e2e.servers import server_env
from tests.tools.helpers import call

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

COMMAND = str(Path(sys.executable).parent / "hybrid-memory")


def run(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [COMMAND, *args, "--data-dir", str(data_dir)],
        env=server_env(data_dir),
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_stop_with_nothing_running_says_so_and_exits_0(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    done = run(data_dir, "stop")
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"no memory host runs on {data_dir}: nothing to stop\n",
        "",
    )


async def test_stop_ends_a_detached_host_which_closes_the_store_and_frees_it(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    params = StdioServerParameters(
        command=COMMAND, args=["serve", "--detached-host"], env=server_env(data_dir)
    )
    message = {"role": "user", "id": "m1", "content": "The glasshouse key hangs behind the door."}
    try:
        with anyio.fail_after(180):
            async with Client(params) as client:
                await call(client, "remember_thread", thread_id="t1", messages=[message])
        [host] = host_pids(data_dir)  # it outlives the session, as the plugin's host does
        assert not lock.is_free(data_dir)

        done = await anyio.to_thread.run_sync(lambda: run(data_dir, "stop"))

        assert (done.returncode, done.stdout, done.stderr) == (
            0,
            f"stopped the memory host on {data_dir} (pid {host})\n",
            "",
        )
        assert host_pids(data_dir) == []
        assert lock.is_free(data_dir)
        assert "asked to stop by hybrid-memory stop" in (data_dir / "host.log").read_text()
        # The store was closed cleanly: a command opening it itself finds the memory.
        stats = await anyio.to_thread.run_sync(lambda: run(data_dir, "stats"))
        assert stats.returncode == 0, stats.stderr
        assert json.loads(stats.stdout)["items"] == 1
        again = await anyio.to_thread.run_sync(lambda: run(data_dir, "stop"))
        assert (again.returncode, again.stdout) == (
            0,
            f"no memory host runs on {data_dir}: nothing to stop\n",
        )
    finally:
        stop_hosts(data_dir)
