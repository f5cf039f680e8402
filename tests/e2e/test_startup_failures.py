"""Start-up as a misconfigured user meets it: one line on stderr, an exit code by cause, never a traceback.

And a server store that is down at start: the server starts, the tools that need that store
say so, the rest keep working. Unreachable addresses (port 1 on loopback) need no network.
"""

from __future__ import annotations

import sys
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters

from tests.e2e.servers import free_port, http_server, serve_command, server_env
from tests.tools.helpers import call, call_error

pytestmark = [pytest.mark.subprocess]

DOWN = "Tools that do not need it keep working."


async def serve_fails(data_dir: Path, *args: str, **env: str) -> tuple[int, str]:
    """Run ``hybrid-memory serve``, which must end by itself, nothing on stdout; its code and stderr."""
    with anyio.fail_after(90):
        done = await anyio.run_process(
            serve_command(*args), env=server_env(data_dir, **env), input=b"", check=False
        )
    assert done.stdout == b""
    return done.returncode, done.stderr.decode()


@pytest.mark.parametrize(
    ("args", "env", "code", "line"),
    [
        (
            ["--transport", "http", "--port", "99999"],
            {},
            2,
            "invalid setting --port (HYBRID_MEMORY_HTTP_PORT): Input should be less than or equal to 65535",
        ),
        (
            [],
            {"HYBRID_MEMORY_CHUNK_TOKENS": "many"},
            2,
            "invalid setting HYBRID_MEMORY_CHUNK_TOKENS: "
            "Input should be a valid integer, unable to parse string as an integer",
        ),
        (
            ["--transport", "http"],
            {"HYBRID_MEMORY_HTTP_TOKEN": "short"},
            2,
            "invalid settings: the HTTP token must have at least 16 characters; make one with "
            "python -c 'import secrets; print(secrets.token_urlsafe(32))'",
        ),
        (
            ["--transport", "http", "--host", "::"],
            {},
            2,
            "--host :: listens beyond this machine and needs a bearer token: set HYBRID_MEMORY_HTTP_TOKEN "
            "(or HYBRID_MEMORY_HTTP_TOKEN_FILE), or bind --host 127.0.0.1",
        ),
    ],
)
async def test_a_bad_setting_ends_with_one_line_and_code_2(
    tmp_path: Path, args: list[str], env: dict[str, str], code: int, line: str
) -> None:
    assert await serve_fails(tmp_path / "data", *args, **env) == (code, f"hybrid-memory: {line}\n")


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_an_unusable_data_dir_ends_with_one_line_and_code_3(tmp_path: Path, transport: str) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("not a directory")
    data = blocker / "data"
    assert await serve_fails(data, "--transport", transport) == (
        3,
        f"hybrid-memory: the data directory {data} is not usable (Not a directory); choose a writable one "
        "with --data-dir or HYBRID_MEMORY_DATA_DIR\n",
    )


async def test_a_store_path_taken_by_a_file_ends_with_one_line_and_code_3(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "vectors").write_text("not a store")
    assert await serve_fails(data) == (3, f"hybrid-memory: cannot use {data / 'vectors'}: File exists\n")


@pytest.mark.model
async def test_a_busy_port_and_a_busy_store_each_end_with_one_line(tmp_path: Path) -> None:
    with http_server(tmp_path / "data") as first:
        code, err = await serve_fails(tmp_path / "other", "--transport", "http", "--port", str(first.port))
        assert (code, err) == (
            4,
            f"hybrid-memory: cannot listen on 127.0.0.1:{first.port}: Address already in use; another server "
            "(hybrid-memory?) listens there: pick another --port\n",
        )
        code, err = await serve_fails(tmp_path / "data", "--transport", "http", "--port", str(free_port()))
        assert code == 3
        assert err == (
            f"hybrid-memory: Another hybrid-memory server already holds the store in {tmp_path / 'data'} "
            f"(it holds {tmp_path / 'data' / 'serve.lock'}); stop it before serving HTTP here, or pass "
            "--data-dir (HYBRID_MEMORY_DATA_DIR) for another store.\n"
        )


def stdio(data_dir: Path, **env: str) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "hybrid_memory", "serve"], env=server_env(data_dir, **env)
    )


@pytest.mark.model
async def test_an_unreachable_graph_server_leaves_memories_working_and_notes_saying_why(
    tmp_path: Path,
) -> None:
    with anyio.fail_after(120):
        async with Client(stdio(tmp_path / "data", NEO4J_URI="bolt://127.0.0.1:1")) as client:
            message = {"role": "user", "content": "We moved the office to Kraków.", "id": "u1"}
            stored = await call(client, "remember_thread", thread_id="t", messages=[message])
            assert stored["stored"] == 1
            recall = await call(client, "recall_memory", query="where is the office now?")
            assert recall["results"][0]["message_id"] == "u1"
            error = await call_error(client, "create_note", content="The office is in Kraków.", type="fact")
            assert "The graph store at bolt://127.0.0.1:1 is unreachable (" in error
            assert error.endswith(f"); start it or unset NEO4J_URI. {DOWN}")


@pytest.mark.model
async def test_an_unreachable_vector_server_leaves_the_graph_working_and_memories_saying_why(
    tmp_path: Path,
) -> None:
    env = {"QDRANT_URL": "http://127.0.0.1:1", "HYBRID_MEMORY_QDRANT_TIMEOUT": "2"}
    with anyio.fail_after(120):
        async with Client(stdio(tmp_path / "data", **env)) as client:
            error = await call_error(client, "list_threads")
            assert error.endswith(
                "The vector store at http://127.0.0.1:1 is unreachable (All connection attempts failed); "
                f"start it or unset QDRANT_URL. {DOWN}"
            )
            missing = await call_error(client, "get_linked_notes", note_id="n-404")
            assert "No note 'n-404' in this project." in missing  # the graph answered
