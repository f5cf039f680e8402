"""Shared fixtures: settings on a temporary data dir, the real local model, a server and its client."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from mcp.server.mcpserver import MCPServer

from hybrid_memory.embeddings import build_embedder
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.server import AppContext, build_server
from hybrid_memory.settings import PACKAGED_MODEL_DIR, EmbeddingSettings, Settings

REPO = Path(__file__).resolve().parents[1]


def model_dir() -> Path:
    """The model under test: HYBRID_MEMORY_EMBEDDING_MODEL_PATH, else the packaged int8 model.

    The packaged model by default: it is what users get, it needs nothing beside the
    checkout, and it is the faster one. Export the variable (e.g. to the fp32 export in
    shared/) to run the suite on another model; tests/embeddings keeps fp32 tests either way.
    """
    configured = os.environ.get("HYBRID_MEMORY_EMBEDDING_MODEL_PATH")
    path = Path(configured) if configured else PACKAGED_MODEL_DIR
    if not (path / "model.onnx").is_file():
        pytest.fail(f"No ONNX model at {path}: set HYBRID_MEMORY_EMBEDDING_MODEL_PATH to the model directory")
    return path


def make_settings(data_dir: Path, **overrides: object) -> Settings:
    return Settings(
        data_dir=data_dir,
        project="test",
        vector_backend="edge",
        graph_backend="sqlite",
        embedding=EmbeddingSettings(model_path=model_dir()),
        **overrides,  # type: ignore[arg-type]
    )


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """One real model for the whole session: loading it per test would dominate the run."""
    return build_embedder(EmbeddingSettings(model_path=model_dir()))


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    return make_settings(tmp_path / "data")


@pytest.fixture
def server(settings: Settings, embedder: Embedder) -> MCPServer[AppContext]:
    """A server to connect to with ``async with Client(server)`` inside the test.

    Not a client fixture: pytest-asyncio runs a fixture's setup and teardown in
    different tasks, and the server's lifespan holds a task group, which must be
    left in the task that entered it.
    """
    return build_server(settings, embedder=embedder)
