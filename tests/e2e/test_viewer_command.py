"""``hybrid-memory view`` for stdio users: beside a running stdio or HTTP server, and with none."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest
from mcp import Client

from tests.e2e.browser import chromium_page, needs_chromium
from tests.e2e.many_clients import stdio_params
from tests.e2e.servers import http_server, server_env
from tests.tools.helpers import call

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

SAID = {"role": "user", "id": "m1", "content": "The lighthouse keeper is called Ines."}


@asynccontextmanager
async def viewer(data_dir: Path, log: Path) -> AsyncIterator[tuple[str, str]]:
    """``hybrid-memory view`` running on ``data_dir``: (its base URL, its token); stopped with SIGTERM."""
    command = [sys.executable, "-m", "hybrid_memory", "view", "--data-dir", str(data_dir)]
    with log.open("wb") as errors:
        process = await anyio.open_process(command, env=server_env(data_dir), stderr=errors)
        try:
            assert process.stdout is not None
            line = b""
            with anyio.fail_after(120):
                while not line.endswith(b"\n"):
                    line += await process.stdout.receive(1)
            url = line.decode().strip()
            base, _, token = url.partition("/viewer")
            yield base, token.partition("#token=")[2]
            process.terminate()
            with anyio.fail_after(60):
                code = await process.wait()
            assert code == 0, f"hybrid-memory view exited {code}; its log: {log}"
        finally:
            if process.returncode is None:
                process.kill()
                await process.wait()


@needs_chromium
@pytest.mark.browser
async def test_view_shows_what_a_running_stdio_server_holds_and_leaves_it_running(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with anyio.fail_after(300):
        async with Client(stdio_params(data)) as client:
            await call(client, "remember_thread", thread_id="lighthouse", messages=[SAID])
            async with viewer(data, tmp_path / "view.log") as (base, token):
                async with httpx.AsyncClient(base_url=base, timeout=60) as http:
                    assert (await http.get("/viewer/api/threads")).status_code == 401
                    page = await http.get("/viewer")  # the static page, relayed with its headers
                    assert "connect-src 'self'" in page.headers["content-security-policy"]
                    assert page.headers["x-frame-options"] == "DENY"
                async with chromium_page() as page:
                    requests: list[str] = []
                    page.on("request", lambda r: requests.append(r.url))
                    await page.goto(f"{base}/viewer#token={token}")
                    await page.wait_for_selector("body[data-ready]")
                    await page.click('#thread-list a[data-thread="lighthouse"]')
                    await page.wait_for_selector("#thread-view .msg")
                    assert SAID["content"] in await page.inner_text("#thread-view")
                    await page.fill("#q", "who keeps the lighthouse?")
                    await page.press("#q", "Enter")
                    await page.wait_for_selector("#results .item")
                    assert SAID["content"] in await page.inner_text("#results .item")
                assert [u for u in requests if not u.startswith(f"{base}/viewer")] == []
            # The viewer joined the server's host: its leaving changed nothing for the client.
            listed = await call(client, "list_threads")
    assert [t["thread_id"] for t in listed["threads"]] == ["lighthouse"]


async def test_view_without_a_server_hosts_the_store_and_a_stdio_server_joins_then_takes_over(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with anyio.fail_after(300):
        async with AsyncExitStack() as cleanup:
            view = AsyncExitStack()
            cleanup.push_async_callback(view.aclose)
            base, token = await view.enter_async_context(viewer(data, tmp_path / "view.log"))
            client = await cleanup.enter_async_context(Client(stdio_params(data)))
            await call(client, "remember_thread", thread_id="joined", messages=[SAID])
            auth = {"Authorization": f"Bearer {token}"}
            async with httpx.AsyncClient(base_url=base, timeout=60, headers=auth) as http:
                threads = (await http.get("/viewer/api/threads")).json()
                recalled = (await http.get("/viewer/api/recall", params={"q": "lighthouse"})).json()
            assert [t["thread_id"] for t in threads["threads"]] == ["joined"]
            assert recalled["results"][0]["text"] == SAID["content"]

            await view.aclose()  # the viewer, which hosts the store, stops first
            again = await call(client, "recall_memory", query="who keeps the lighthouse?")
    assert again["results"][0]["text"] == SAID["content"]


async def test_views_refusal_without_its_token_says_the_token_is_in_the_url_view_printed(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(300):
        async with (
            viewer(tmp_path / "data", tmp_path / "view.log") as (base, _token),
            httpx.AsyncClient(base_url=base, timeout=60) as http,
        ):
            refused = await http.get("/viewer/api/threads")
    assert refused.status_code == 401
    assert refused.json() == {
        "error": "unauthorized",
        "error_description": "A bearer token is required: send Authorization: Bearer "
        "<the token after #token= in the URL hybrid-memory view printed>.",
    }


def test_view_is_listed_in_the_help() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hybrid_memory", "view", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert "--port" in done.stdout


async def test_view_beside_an_http_server_reads_that_servers_store(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    with http_server(data) as running:
        async with Client(running.url) as client:
            await call(client, "remember_thread", thread_id="over-http", messages=[SAID])
        with anyio.fail_after(300):
            async with viewer(data, tmp_path / "view.log") as (base, token):
                auth = {"Authorization": f"Bearer {token}"}
                async with httpx.AsyncClient(base_url=base, timeout=60, headers=auth) as http:
                    threads = (await http.get("/viewer/api/threads")).json()
    assert [t["thread_id"] for t in threads["threads"]] == ["over-http"]
