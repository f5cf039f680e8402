"""Shared fixtures: settings on a temporary data dir, the real local model, a server and its client."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp import Client

from hybrid_memory.embeddings import build_embedder
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.server import build_server
from hybrid_memory.settings import EmbeddingSettings, Settings

REPO = Path(__file__).resolve().parents[1]


def model_dir() -> Path:
    """The offline model: HYBRID_MEMORY_EMBEDDING_MODEL_PATH, else shared/ beside the checkout."""
    configured = os.environ.get("HYBRID_MEMORY_EMBEDDING_MODEL_PATH")
    path = Path(configured) if configured else REPO.parent / "shared" / "models" / "all-MiniLM-L6-v2-onnx"
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
async def client(settings: Settings, embedder: Embedder) -> AsyncIterator[Client]:
    async with Client(build_server(settings, embedder=embedder)) as c:
        yield c
