"""Every secret of the corpus, sent through every tool that stores text, reaches no store; near-misses are
stored as they were sent.

Through the real server (Qdrant Edge, SQLite, the packaged model): thread messages,
note contents (created and updated), tags and task records, then every file of the data
directory and an export are searched for the secrets' bytes.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client
from mcp.server.mcpserver import MCPServer

from hybrid_memory.service.redaction import redact
from hybrid_memory.settings import Settings
from hybrid_memory.transfer import export_file
from tests.tools.helpers import call
from tests.unit.near_miss_corpus import NEAR_MISSES
from tests.unit.secret_corpus import SECRETS

SHORT = [secret for _, _, secret in SECRETS if len(secret) <= 64 and redact(secret).text != secret]
"""Secrets that fit in a tag and are known by their shape alone (a tag has no context to name it)."""


async def remember(client: Client, thread_id: str, texts: list[str]) -> Any:
    messages = [{"role": "user", "content": text} for text in texts]
    return await call(client, "remember_thread", thread_id=thread_id, messages=messages)


def holding(data: bytes) -> list[str]:
    return sorted({kind for kind, _, secret in SECRETS if secret.encode() in data})


async def test_no_secret_of_the_corpus_reaches_a_store_by_any_tool(
    server: MCPServer[Any], settings: Settings, tmp_path: Path
) -> None:
    texts = [text for _, text, _ in SECRETS]
    async with Client(server) as client:
        stored = await remember(client, "pasted", texts)
        assert stored["redacted"] >= len(SECRETS)
        notes = [
            await call(client, "create_note", content=text, type="fact", force=True, tags=SHORT[i : i + 8])
            for i, text in zip(range(0, 40, 8), texts[::40], strict=False)
        ]
        for note, text in zip(notes, texts[1::40], strict=False):
            await call(client, "update_note", note_id=note["id"], content=text, tags=SHORT[-8:])
        for text in texts[2::40]:
            await call(client, "record_task", description=text, outcome=text, success=False)
    exported = tmp_path / "export.jsonl"
    await export_file(settings, exported)

    files = [p for p in settings.data_dir.rglob("*") if p.is_file()] + [exported]
    assert {str(p): holding(p.read_bytes()) for p in files} == {str(p): [] for p in files}


async def test_near_misses_are_stored_as_sent(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        stored = await remember(client, "ordinary", NEAR_MISSES)
        note = await call(client, "create_note", content=NEAR_MISSES[0], type="fact", tags=["sha", "uuid"])
    assert stored["redacted"] == 0
    assert stored["stored"] == len(NEAR_MISSES)
    assert note["redacted"] == 0
    assert note["tags"] == ["sha", "uuid"]
