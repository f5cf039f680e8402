"""Streamable HTTP as an attacker and an operator meet it: the token, the allow-lists, refusing to start.

Every request goes over a real socket to ``hybrid-memory serve --transport http`` in a child process.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from tests.e2e.servers import INITIALIZE, RunningServer, http_server, serve_command, server_env
from tests.tools.helpers import call

pytestmark = [pytest.mark.subprocess]

TOKEN = "s3cret-token-for-the-e2e-suite-0123456789"
MCP_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
PUBLIC = {"HYBRID_MEMORY_HTTP_TOKEN": TOKEN, "HYBRID_MEMORY_HTTP_ALLOWED_HOSTS": "memory.example"}


async def post(url: str, **headers: str) -> httpx2.Response:
    """One initialize request, as a browser page or a stray client would send it."""
    async with httpx2.AsyncClient(timeout=30) as http:
        return await http.post(url, json=INITIALIZE, headers={**MCP_HEADERS, **headers})


def bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


@pytest.fixture(scope="module")
def public(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """One server bound to 0.0.0.0 with a token and an allow-list, shared by the tests that only ask."""
    data = tmp_path_factory.mktemp("public") / "data"
    with http_server(data, args=["--host", "0.0.0.0"], env=PUBLIC) as server:
        yield server


async def test_public_bind_answers_401_with_a_bearer_challenge_without_the_right_token(
    public: RunningServer,
) -> None:
    server = public
    with anyio.fail_after(60):
        missing = await post(server.url)
        assert missing.status_code == 401
        assert missing.headers["www-authenticate"] == 'Bearer realm="hybrid-memory"'
        assert missing.json()["error_description"] == (
            "A bearer token is required: send Authorization: Bearer <HYBRID_MEMORY_HTTP_TOKEN>."
        )
        wrong = await post(server.url, **bearer(TOKEN[:-1] + "X"))
        assert wrong.status_code == 401
        assert wrong.headers["www-authenticate"] == (
            'Bearer realm="hybrid-memory", error="invalid_token", '
            'error_description="The bearer token is not valid."'
        )
        basic = await post(server.url, authorization="Basic dXNlcjpwYXNz")
        assert basic.status_code == 401
        assert (await post(server.url, **bearer(TOKEN))).status_code == 200


async def test_mcp_client_with_the_token_calls_tools_over_a_public_bind(public: RunningServer) -> None:
    with anyio.fail_after(60):
        http = create_mcp_http_client(headers=bearer(TOKEN))
        async with http, Client(streamable_http_client(public.url, http_client=http)) as client:
            names = {tool.name for tool in (await client.list_tools()).tools}
            assert {"remember_thread", "recall_memory", "create_note"} <= names
            threads = await call(client, "list_threads")
            assert threads["threads"] == []


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"host": "evil.example"}, 421),
        ({"host": "evil.example", "origin": "http://evil.example"}, 421),
        ({"origin": "http://evil.example"}, 403),
        ({"host": "memory.example:8443", "origin": "http://evil.example"}, 403),
    ],
)
async def test_foreign_host_or_origin_is_refused_on_a_public_bind_even_with_the_token(
    public: RunningServer, headers: dict[str, str], status: int
) -> None:
    with anyio.fail_after(60):
        assert (await post(public.url, **bearer(TOKEN), **headers)).status_code == status


async def test_the_operators_host_with_any_port_and_loopback_names_are_let_through(
    public: RunningServer,
) -> None:
    with anyio.fail_after(60):
        for host in ("memory.example", "memory.example:8443", f"localhost:{public.port}"):
            assert (await post(public.url, **bearer(TOKEN), host=host)).status_code == 200, host


async def test_foreign_host_or_origin_is_refused_on_loopback(tmp_path: Path) -> None:
    with anyio.fail_after(90), http_server(tmp_path / "data") as server:
        assert (await post(server.url, host="evil.example", origin="http://evil.example")).status_code == 421
        assert (await post(server.url, host=f"evil.example:{server.port}")).status_code == 421
        assert (await post(server.url, origin="http://evil.example")).status_code == 403
        assert (await post(server.url, host=f"localhost:{server.port}")).status_code == 200
        # loopback without a configured token: no token needed
        assert (await post(server.url)).status_code == 200


async def test_loopback_with_a_token_file_requires_the_token(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    env = {"HYBRID_MEMORY_HTTP_TOKEN_FILE": str(token_file)}
    with anyio.fail_after(90), http_server(tmp_path / "data", env=env) as server:
        assert (await post(server.url)).status_code == 401
        assert (await post(server.url, **bearer(TOKEN))).status_code == 200


async def test_public_bind_without_a_token_refuses_to_start(tmp_path: Path) -> None:
    done = await anyio.run_process(
        serve_command("--transport", "http", "--host", "0.0.0.0"),
        env=server_env(tmp_path / "data"),
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == b""
    assert done.stderr.decode() == (
        "hybrid-memory: --host 0.0.0.0 listens beyond this machine and needs a bearer token: set "
        "HYBRID_MEMORY_HTTP_TOKEN (or HYBRID_MEMORY_HTTP_TOKEN_FILE), or bind --host 127.0.0.1\n"
    )
    assert not (tmp_path / "data").exists()  # nothing was opened
