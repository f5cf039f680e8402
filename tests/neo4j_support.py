"""A Bolt server for the Neo4j backend's tests: a real Neo4j when configured, else ArcadeDB.

``HYBRID_MEMORY_TEST_NEO4J_URI`` (with ``HYBRID_MEMORY_TEST_NEO4J_USER`` /
``_PASSWORD`` / ``_DATABASE``) points the tests at a real Neo4j, dialect ``neo4j``.
**Use a throw-away database: every test deletes all ``Note`` nodes in it.**

Otherwise one ArcadeDB server (``arcadedb-jvm``, its Bolt plugin on a free
127.0.0.1 port) is started on first use and stopped when the pytest session ends.
It runs in a child process (this file, run as a script) rather than in pytest's:
the JVM then never shares pytest's file descriptors, signals or exit, its logs go
to a file under the session's temporary directory, and a killed pytest still stops
it, because the child stops the server when its stdin closes.

The server is shared by the whole session (start-up takes seconds); each test gets
an empty graph from :func:`neo4j_backend`, which deletes every note first.
"""

from __future__ import annotations

import importlib.util
import os
import secrets
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

import pytest
from neo4j import AsyncGraphDatabase

from hybrid_memory.backends.base import GraphStore
from hybrid_memory.backends.neo4j_graph import Neo4jGraphStore

ENV_URI = "HYBRID_MEMORY_TEST_NEO4J_URI"
ARCADEDB_DATABASE = "memory"
ARCADEDB_USER = "root"
START_TIMEOUT_S = 180.0
"""Generous: a cold JVM on a loaded CI machine. Here a start takes 5 to 7 seconds."""
STORE_TIMEOUT_S = 30.0
# Test-only: empties the graph between tests. Not part of the backend, so not in cypher.py.
DELETE_ALL_NOTES = "MATCH (n:Note) DETACH DELETE n"


@dataclass(frozen=True)
class BoltTarget:
    """Where the Neo4j backend's tests connect, and which Cypher dialect it speaks."""

    uri: str
    user: str
    password: str | None
    database: str | None
    dialect: Literal["neo4j", "arcadedb"]

    def store(self) -> Neo4jGraphStore:
        return Neo4jGraphStore(
            self.uri,
            self.user,
            self.password,
            self.database,
            timeout_s=STORE_TIMEOUT_S,
            dialect=self.dialect,
        )

    async def delete_all_notes(self) -> None:
        auth = None if self.password is None else (self.user, self.password)
        async with AsyncGraphDatabase.driver(self.uri, auth=auth) as driver:
            await driver.execute_query(DELETE_ALL_NOTES, database_=self.database)


_TARGET = pytest.StashKey[BoltTarget]()


def bolt_target(request: pytest.FixtureRequest) -> BoltTarget:
    """The session's Bolt server, started on first call and stopped at the end of the session."""
    config = request.config
    if _TARGET in config.stash:
        return config.stash[_TARGET]
    uri = os.environ.get(ENV_URI)
    if uri:
        target = BoltTarget(
            uri=uri,
            user=os.environ.get("HYBRID_MEMORY_TEST_NEO4J_USER", "neo4j"),
            password=os.environ.get("HYBRID_MEMORY_TEST_NEO4J_PASSWORD"),
            database=os.environ.get("HYBRID_MEMORY_TEST_NEO4J_DATABASE"),
            dialect="neo4j",
        )
    else:
        target = _start_arcadedb(config, request.getfixturevalue("tmp_path_factory"))
    config.stash[_TARGET] = target
    return target


@pytest.fixture(scope="session")
def bolt_server(request: pytest.FixtureRequest) -> BoltTarget:
    """The session's Bolt server (see the module docstring) for tests that import this fixture."""
    return bolt_target(request)


def neo4j_backend(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Callable[[], AbstractAsyncContextManager[GraphStore]]:
    """The contract suite's hook (``graph_backends.py``): an opener onto an emptied graph."""
    target = bolt_target(request)
    emptied = False

    @asynccontextmanager
    async def opener() -> AsyncIterator[GraphStore]:
        nonlocal emptied
        if not emptied:
            await target.delete_all_notes()
            emptied = True
        store = target.store()
        await store.open()
        try:
            yield store
        finally:
            await store.close()

    return opener


# -- ArcadeDB in a child process -----------------------------------------------------------------


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _start_arcadedb(config: pytest.Config, tmp_path_factory: pytest.TempPathFactory) -> BoltTarget:
    # Only the child imports arcadedb (and with it JPype and the JVM).
    if importlib.util.find_spec("arcadedb") is None:
        reason = "arcadedb-jvm is not installed (pip install -e '.[test]'); it runs the Neo4j backend tests"
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail(reason, pytrace=False)
        pytest.skip(reason)
    root = tmp_path_factory.mktemp("arcadedb")
    password = secrets.token_hex(12)
    bolt_port, http_port = _free_port(), _free_port()
    log_path = root / "server.log"
    env = {**os.environ, "ARCADEDB_LOG_CONSOLE": "0", "ARCADEDB_LOG_DIR": str(root / "log")}
    with log_path.open("wb") as log:
        child = subprocess.Popen(
            [sys.executable, __file__, str(root / "databases"), str(bolt_port), str(http_port)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            env={**env, "ARCADEDB_TEST_ROOT_PASSWORD": password},
        )
    assert child.stdout is not None
    config.add_cleanup(lambda: _stop(child))
    line = _read_line(child.stdout, START_TIMEOUT_S)
    if line != "READY":
        _stop(child)
        tail = log_path.read_text(errors="replace")[-3000:]
        pytest.fail(f"ArcadeDB did not start within {START_TIMEOUT_S:g}s (said {line!r}); log:\n{tail}")
    return BoltTarget(
        uri=f"bolt://127.0.0.1:{bolt_port}",
        user=ARCADEDB_USER,
        password=password,
        database=ARCADEDB_DATABASE,
        dialect="arcadedb",
    )


def _read_line(stream: IO[bytes], timeout_s: float) -> str:
    """One line from the child, or "" when it exits or stays silent for ``timeout_s``."""
    lines: list[bytes] = []
    reader = threading.Thread(target=lambda: lines.append(stream.readline()), daemon=True)
    reader.start()
    reader.join(timeout_s)
    return lines[0].decode(errors="replace").strip() if lines else ""


def _stop(child: subprocess.Popen[bytes]) -> None:
    """Close the child's stdin (it then stops ArcadeDB cleanly); kill it if it hangs."""
    if child.poll() is None:
        if child.stdin is not None:
            child.stdin.close()
        try:
            child.wait(timeout=30)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
    for stream in (child.stdin, child.stdout):
        if stream is not None:
            stream.close()


def _serve(root: str, bolt_port: int, http_port: int) -> None:
    """The child: start ArcadeDB with Bolt, say READY, stop when stdin closes."""
    from arcadedb import ArcadeDBServer

    server = ArcadeDBServer(
        root,
        root_password=os.environ["ARCADEDB_TEST_ROOT_PASSWORD"],
        config={
            "host": "127.0.0.1",
            "http_port": http_port,
            "server_plugins": "Bolt:com.arcadedb.bolt.BoltProtocolPlugin",
            "bolt_port": bolt_port,
        },
    )
    server.start()
    try:
        server.create_database(ARCADEDB_DATABASE)
        sys.stdout.write("READY\n")
        sys.stdout.flush()
        # Nobody reads our stdout after READY: anything written to it later (by Python or
        # the JVM) goes to the log with stderr, so a full pipe can never block the server.
        os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
        sys.stdin.read()  # returns at EOF: the parent closed our stdin or died
    finally:
        server.stop()


if __name__ == "__main__":
    _serve(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
