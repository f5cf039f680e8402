"""Many stdio servers on one data dir: the first owns the store, the others join it, one takes over."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.cli_runs import hybrid_memory
from tests.e2e.many_clients import lost_writes, run_clients, stdio_params
from tests.e2e.servers import INITIALIZE, serve_command, server_env
from tests.tools.helpers import call

pytestmark = [pytest.mark.subprocess, pytest.mark.model]


async def test_eight_stdio_clients_at_once_share_one_store(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    with anyio.fail_after(300):
        reports = await run_clients(data_dir, clients=8, calls=25)
        lost = await lost_writes(data_dir, reports)

    assert [r.refused for r in reports] == [None] * 8
    assert [e for r in reports for e in r.errors] == []
    assert [r.calls for r in reports] == [25] * 8
    assert sum(len(r.memory_ids) for r in reports) == 8 * 10
    assert sum(len(r.note_ids) for r in reports) == 8 * 5
    assert lost == []


async def test_when_the_owner_leaves_a_joined_server_takes_over(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    message = {"role": "user", "id": "m1", "content": "The lighthouse keeper is called Ines."}
    owner_stored, owner_may_leave, owner_left = anyio.Event(), anyio.Event(), anyio.Event()

    async def owner() -> None:
        async with Client(stdio_params(data_dir)) as client:
            await call(client, "remember_thread", thread_id="owner", messages=[message])
            owner_stored.set()
            await owner_may_leave.wait()
        owner_left.set()  # its server process has ended

    with anyio.fail_after(180):
        async with anyio.create_task_group() as tg, Client(stdio_params(data_dir)) as joined:
            tg.start_soon(owner)
            await owner_stored.wait()
            before = await call(joined, "recall_memory", query="who keeps the lighthouse?")
            owner_may_leave.set()
            await owner_left.wait()
            note = await call(joined, "create_note", content="Ines keeps the lighthouse.", type="fact")
            after = await call(joined, "recall_memory", query="who keeps the lighthouse?")
            async with Client(stdio_params(data_dir)) as third:
                seen = await call(third, "recall_memory", query="who keeps the lighthouse?")

    assert before["results"][0]["text"] == message["content"]
    assert {r["id"] for r in after["results"]} >= {note["id"], before["results"][0]["id"]}
    assert {r["id"] for r in seen["results"]} == {r["id"] for r in after["results"]}


async def test_a_stdio_client_that_closes_stdin_at_once_still_gets_its_answers(tmp_path: Path) -> None:
    params = stdio_params(tmp_path / "data")
    remember = {"thread_id": "t1", "messages": [{"role": "user", "content": "The ferry leaves at nine."}]}
    requests = [
        INITIALIZE,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "remember_thread", "arguments": remember},
        },
    ]
    piped = "".join(json.dumps(request) + "\n" for request in requests)
    with anyio.fail_after(60):
        done = await anyio.run_process(
            [params.command, *params.args], input=piped.encode(), env=params.env, check=False
        )
    assert done.returncode == 0, done.stderr.decode()[-500:]
    answers = {answer["id"]: answer for answer in map(json.loads, done.stdout.decode().splitlines())}
    assert set(answers) == {1, 2}
    assert answers[2]["result"]["structuredContent"]["stored"] == 1


async def test_a_server_that_joins_keeps_its_own_project(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    garden = StdioServerParameters(
        command=serve_command()[0],
        args=serve_command()[1:],
        env=server_env(data_dir, HYBRID_MEMORY_PROJECT="garden"),
    )
    message = {"role": "user", "id": "m1", "content": "The roses in the garden are pruned in February."}
    query = "when are the roses pruned?"
    with anyio.fail_after(180):
        async with Client(stdio_params(data_dir)) as owner:  # project e2e: it hosts the store
            await call(owner, "memory_stats")
            async with Client(garden) as joined:
                await call(joined, "remember_thread", thread_id="roses", messages=[message])
                mine = await call(joined, "recall_memory", query=query)
            theirs = await call(owner, "recall_memory", query=query)
    in_garden = await anyio.to_thread.run_sync(
        lambda: hybrid_memory(data_dir, "stats", "--project", "garden")
    )
    in_e2e = await anyio.to_thread.run_sync(lambda: hybrid_memory(data_dir, "stats", "--project", "e2e"))

    assert [r["text"] for r in mine["results"]] == [message["content"]]
    assert theirs["results"] == []
    assert json.loads(in_garden.stdout)["items"] == 1
    assert json.loads(in_e2e.stdout)["items"] == 0
