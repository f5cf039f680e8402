"""An import stores no secret: a file from another server, or from a store an older redaction let a
secret into, is redacted on the way in, as the tools redact what they store."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from hybrid_memory.backends import open_graph_store, open_vector_store
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.models import Memory, MemoryKind, MemoryRecord, Note, NoteFilter, NoteType, Scope
from hybrid_memory.settings import Settings
from hybrid_memory.transfer import export_file, import_file
from tests.conftest import make_settings
from tests.unit.secret_corpus import SECRETS

SCOPE = Scope(project="test", user="default")
KINDS = ("telegram", "dockerhub", "quay_robot", "gcp_sa_b64", "prose", "rubygems", "slack_app")
CASES = [next((text, secret) for kind, text, secret in SECRETS if kind == k) for k in KINDS]


def leaked(settings: Settings) -> dict[str, list[str]]:
    """Every file of the store that holds one of the secrets, with the secrets it holds."""
    found: dict[str, list[str]] = {}
    for path in settings.data_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if hits := [secret for _, secret in CASES if secret.encode() in data]:
                found[str(path)] = hits
    return found


async def test_an_mcp_memory_file_is_imported_without_its_secrets(tmp_path: Path, embedder: Embedder) -> None:
    target = make_settings(tmp_path / "target")
    file = tmp_path / "memory.jsonl"
    lines = [
        {"type": "entity", "name": "Deploy", "entityType": "runbook", "observations": [t for t, _ in CASES]},
        {"type": "entity", "name": "Ada", "entityType": "person", "observations": ["Owns the deploy"]},
        {"type": "relation", "from": "Ada", "to": "Deploy", "relationType": "owns"},
    ]
    file.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")

    first = await import_file(target, file, embedder=embedder)
    second = await import_file(target, file, embedder=embedder)

    assert first.written["note"] == len(CASES) + 3  # two entities and every observation
    assert second.written == {"memory": 0, "note": 0, "link": 0}
    assert leaked(target) == {}
    async with open_graph_store(target) as graph:
        notes = await graph.list_notes(NoteFilter(scope=SCOPE), 100)
    assert sum("[REDACTED:" in note.content for note in notes) == len(CASES)


async def test_an_export_holding_secrets_is_imported_redacted_and_re_embedded(
    tmp_path: Path, embedder: Embedder
) -> None:
    source = make_settings(tmp_path / "source")
    clean = Memory(id=str(uuid.uuid4()), kind=MemoryKind.NOTE, text="Backups run nightly", project="test")
    dirty = [
        Memory(id=str(uuid.uuid4()), kind=MemoryKind.MESSAGE, text=text, project="test", tags=["deploy"])
        for text, _ in CASES
    ]
    tagged = Note(
        id=str(uuid.uuid4()), project="test", content=CASES[0][0], type=NoteType.FACT, tags=[CASES[1][1]]
    )
    # Written past the service, as a store filled by an older redaction would hold them.
    async with (
        open_vector_store(source, dimension=embedder.dimension, model=embedder.model_name) as vectors,
        open_graph_store(source) as graph,
    ):
        memories = [clean, *dirty]
        dense = await embedder.embed_documents([m.text for m in memories])
        bm25 = Bm25Encoder()
        await vectors.upsert(
            [
                MemoryRecord(memory=m, dense=v, sparse=bm25.encode_document(m.text))
                for m, v in zip(memories, dense, strict=True)
            ]
        )
        await graph.upsert_note(tagged)
    file = tmp_path / "old.jsonl"
    await export_file(source, file, with_embeddings=True)
    assert CASES[0][1] in file.read_text(encoding="utf-8")

    target = make_settings(tmp_path / "target")
    result = await import_file(target, file, embedder=embedder)

    assert result.written["memory"] == len(memories)
    assert result.embedded == len(dirty)  # the clean memory keeps the file's vector
    assert leaked(target) == {}
    async with open_graph_store(target) as graph:
        (note,) = await graph.get_notes(SCOPE, [tagged.id])
    assert note.tags == ["[REDACTED:docker_token]"]
    assert "[REDACTED:telegram_token]" in note.content
