"""The graph backends the contract suite (``test_graph_store.py``) runs against.

To add a backend, append a ``pytest.param(backend, id="name", marks=...)`` to
``GRAPH_BACKENDS``. A backend is a plain function::

    def backend(request: pytest.FixtureRequest, tmp_path: Path) -> GraphStoreOpener

called once per test while its fixtures are set up (synchronously), so it may pull
session fixtures with ``request.getfixturevalue("...")`` and must hand the test an
empty store. It returns an *opener*: a zero-argument callable giving an async context
manager that yields an open ``GraphStore`` and closes it on exit. Every call of the
same opener must reach the same data (the reopen test opens, closes and opens again),
so a reset belongs in ``backend`` itself or in the opener's first entry.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path

import pytest

from hybrid_memory.backends.base import GraphStore
from hybrid_memory.backends.in_memory_graph import GraphData, InMemoryGraphStore
from hybrid_memory.backends.sqlite_graph import SqliteGraphStore
from tests.neo4j_support import neo4j_backend

GraphStoreOpener = Callable[[], AbstractAsyncContextManager[GraphStore]]
GraphBackend = Callable[[pytest.FixtureRequest, Path], GraphStoreOpener]


def _opener(make: Callable[[], GraphStore]) -> GraphStoreOpener:
    """Open a store from ``make`` on entry, close it on exit."""

    @asynccontextmanager
    async def opener() -> AsyncIterator[GraphStore]:
        store = make()
        await store.open()
        try:
            yield store
        finally:
            await store.close()

    return opener


def sqlite_backend(request: pytest.FixtureRequest, tmp_path: Path) -> GraphStoreOpener:
    """A fresh SQLite file per test, under the test's own ``tmp_path``."""
    path = tmp_path / "graph" / "graph.sqlite3"
    return _opener(lambda: SqliteGraphStore(path))


def memory_backend(request: pytest.FixtureRequest, tmp_path: Path) -> GraphStoreOpener:
    """A fresh in-memory graph per test; every opening reaches the same ``GraphData``."""
    data = GraphData()
    return _opener(lambda: InMemoryGraphStore(data))


GRAPH_BACKENDS: list[pytest.ParameterSet] = [
    pytest.param(sqlite_backend, id="sqlite"),
    pytest.param(memory_backend, id="memory"),
    pytest.param(neo4j_backend, id="neo4j", marks=pytest.mark.neo4j),
]
