"""Degraded, not dead: without the embedding model keyword recall still answers; writes say how to fix it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from hybrid_memory.embeddings import build_embedder
from hybrid_memory.server import build_server
from hybrid_memory.settings import EmbeddingSettings, Settings
from tests.tools.helpers import call, call_error


def without_model(settings: Settings, empty: Path) -> Settings:
    """``settings`` pointing the model at a directory that holds no model: it cannot load."""
    empty.mkdir()
    embedding = EmbeddingSettings(model=settings.embedding.model, model_path=empty)
    return settings.model_copy(update={"embedding": embedding})


async def test_without_the_model_keyword_recall_answers_and_writes_name_the_setting(
    server: MCPServer[Any], settings: Settings, tmp_path: Path
) -> None:
    async with Client(server) as client:
        stored = await call(
            client,
            "remember_thread",
            thread_id="t1",
            messages=[{"role": "user", "content": "The staging database is called heliotrope."}],
        )
    broken = without_model(settings, tmp_path / "no-model")
    embedder = build_embedder(broken.embedding)
    try:
        async with Client(build_server(broken, embedder=embedder)) as client:
            recalled = await call(client, "recall_memory", query="heliotrope database")
            error = await call_error(
                client, "remember_thread", thread_id="t2", messages=[{"role": "user", "content": "more"}]
            )
            note_error = await call_error(client, "create_note", content="a fact", type="fact")
    finally:
        await embedder.close()

    assert [r["id"] for r in recalled["results"]] == stored["memory_ids"]
    assert set(recalled["skipped_channels"]) == {"dense"}
    assert recalled["skipped_channels"]["dense"].startswith("Could not load the embedding model")
    for tool, text in (("remember_thread", error), ("create_note", note_error)):
        assert text.startswith(f"Error executing tool {tool}: Could not load the embedding model")
        assert "Set HYBRID_MEMORY_EMBEDDING_MODEL_PATH to a local directory" in text
        assert "Traceback" not in text
