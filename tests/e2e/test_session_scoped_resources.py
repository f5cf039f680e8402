"""Resources and prompts over the real stdio server read the session's project, as its tools do."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.session import ClientRequestContext, ListRootsFnT
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, ListRootsResult, Root, TextContent, TextResourceContents

from tests.e2e.servers import serve_command, server_env
from tests.tools.helpers import call

pytestmark = [pytest.mark.subprocess, pytest.mark.model]


def _server(data_dir: Path, project: str | None) -> StdioServerParameters:
    env = server_env(data_dir) if project is None else server_env(data_dir, HYBRID_MEMORY_PROJECT=project)
    if project is None:
        env.pop("HYBRID_MEMORY_PROJECT")  # the client's roots decide
    return StdioServerParameters(command=serve_command()[0], args=serve_command()[1:], env=env)


def _in(repo: Path) -> ListRootsFnT:
    async def roots(context: ClientRequestContext) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=repo.as_uri())])

    return roots


async def _read(client: Client, uri: str) -> str:
    (content,) = (await client.read_resource(uri)).contents
    assert isinstance(content, TextResourceContents)
    return content.text


async def _pinned(client: Client, content: str) -> str:
    note = await call(client, "create_note", content=content, type="decision")
    await call(client, "pin_memory", memory_id=note["id"])
    return str(note["id"])


async def test_resources_and_prompts_read_the_project_of_the_session_s_repository(tmp_path: Path) -> None:
    data_dir, repo = tmp_path / "data", tmp_path / "alice" / "api"
    repo.mkdir(parents=True)
    await anyio.run_process(["git", "init", "-q", str(repo)])
    deploys = [{"role": "user", "id": "d1", "content": "The api deploys with make release on Fridays."}]
    with anyio.fail_after(240):
        # The first server hosts the store and has no project: each session's roots decide.
        async with Client(_server(data_dir, None), list_roots_callback=_in(repo)) as session:
            api_note = await _pinned(session, "The api repository releases with `make release`.")
            await call(session, "remember_thread", thread_id="deploys", messages=deploys)
            async with Client(_server(data_dir, None)) as rootless:  # joins the host: project default
                await _pinned(rootless, "The default project's gate code is 4711.")
                rootless_core = await _read(rootless, "memory://core")
                with pytest.raises(MCPError) as not_here:
                    await _read(rootless, "memory://thread/deploys")
            async with Client(_server(data_dir, "garden")) as garden:  # joins, configured: project garden
                await _pinned(garden, "Roses are pruned in February.")
                garden_core = await _read(garden, "memory://core")
                garden_prompt = await garden.get_prompt(
                    "memory_context", {"query": "how does the api deploy?"}
                )
            core = await _read(session, "memory://core")
            thread = await _read(session, "memory://thread/deploys")
            linked = await _read(session, f"memory://note/{api_note}")
            prompt = await session.get_prompt("memory_context", {"query": "how does the api deploy?"})

    assert "The api repository releases with `make release`." in core
    assert "4711" not in core
    assert "Roses" not in core
    assert "4711" in rootless_core
    assert "make release" not in rootless_core
    assert "Roses are pruned in February." in garden_core
    assert "4711" not in garden_core
    assert thread.splitlines()[0] == "thread deploys: 1 memories"
    assert linked.endswith("decision: The api repository releases with `make release`.")
    assert not_here.value.error.code == INVALID_PARAMS
    (message,) = prompt.messages
    assert isinstance(message.content, TextContent)
    assert "make release" in message.content.text
    assert "4711" not in message.content.text
    (garden_message,) = garden_prompt.messages
    assert isinstance(garden_message.content, TextContent)
    assert "make release" not in garden_message.content.text
