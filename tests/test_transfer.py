"""Export and import: round trips between stores, embeddings kept or remade, bad files refused whole.

Stores are compared item by item through the protocols, every field included.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr

from hybrid_memory.backends import open_graph_store, open_vector_store
from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.models import (
    CodeState,
    Link,
    Memory,
    MemoryFilter,
    MemoryKind,
    MemoryRecord,
    MessageIn,
    Note,
    NoteFilter,
    NoteType,
    Relation,
    Scope,
)
from hybrid_memory.service import MemoryService, NoteDraft, RecallOptions, ThreadDraft
from hybrid_memory.settings import Neo4jSettings, Settings
from hybrid_memory.transfer import ImportFileError, export_file, import_file
from tests.conftest import REPO, make_settings, model_dir
from tests.neo4j_support import BoltTarget, bolt_server

__all__ = ["bolt_server"]  # the fixture, imported for the ArcadeDB round trip

SCOPE = Scope(project="test", user="default")
OTHER = Scope(project="side", user="default")
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


@asynccontextmanager
async def stores(settings: Settings, embedder: Embedder) -> AsyncIterator[tuple[VectorStore, GraphStore]]:
    async with (
        open_vector_store(settings, dimension=embedder.dimension, model=embedder.model_name) as vectors,
        open_graph_store(settings) as graph,
    ):
        yield vectors, graph


async def memories_of(vectors: VectorStore, scope: Scope) -> list[Memory]:
    found: list[Memory] = []
    offset: str | None = None
    while True:
        page, offset = await vectors.scroll(MemoryFilter(scope=scope), 100, offset)
        found.extend(page)
        if offset is None:
            return sorted(found, key=lambda m: m.id)


async def graph_of(graph: GraphStore, scope: Scope) -> tuple[list[Note], list[Link]]:
    notes = await graph.list_notes(NoteFilter(scope=scope), 1000)
    return sorted(notes, key=lambda n: n.id), await graph.list_links(scope, 1000)


async def snapshot(settings: Settings, embedder: Embedder) -> dict[Scope, Any]:
    async with stores(settings, embedder) as (vectors, graph):
        return {s: (await memories_of(vectors, s), *await graph_of(graph, s)) for s in (SCOPE, OTHER)}


@pytest.fixture
async def source(tmp_path: Path, embedder: Embedder) -> Settings:
    """Two projects: a thread, notes with links, and a memory with every field set (one private)."""
    settings = make_settings(tmp_path / "source")
    async with stores(settings, embedder) as (vectors, graph):
        service = MemoryService(settings=settings, vectors=vectors, graph=graph, embedder=embedder)
        messages = [
            MessageIn(role="user", content="We picked Postgres for the ledger.", id="m1", created_at=T0),
            MessageIn(role="assistant", content="Noted: Postgres, with nightly backups.", id="m2"),
        ]
        await service.remember_thread(SCOPE, ThreadDraft("thread-1", messages))
        a = await service.create_note(
            SCOPE, NoteDraft(content="Ledger runs on Postgres", type=NoteType.DECISION)
        )
        b = await service.create_note(
            SCOPE, NoteDraft(content="Backups run nightly", type=NoteType.FACT, tags=["ops"])
        )
        await service.create_link(SCOPE, from_id=b.id, to_id=a.id, relation=Relation.SUPPORTS, strength=0.5)
        await service.create_link(SCOPE, from_id=a.id, to_id=b.id, relation=Relation.SUPERSEDES)
        c = await service.create_note(
            OTHER, NoteDraft(content="Side project uses SQLite", type=NoteType.FACT)
        )
        d = await service.create_note(
            OTHER, NoteDraft(content="SQLite is enough here", type=NoteType.INSIGHT)
        )
        await service.create_link(OTHER, from_id=d.id, to_id=c.id, relation=Relation.EXTENDS)
        full = Memory(
            id=str(uuid.uuid4()),
            kind=MemoryKind.SUMMARY,
            text="Summary: the team settled on Postgres.",
            project=SCOPE.project,
            thread_id="thread-1",
            message_id="s1",
            role="assistant",
            chunk_index=1,
            chunk_count=2,
            tags=["db", "summary"],
            importance=0.75,
            created_at=T0,
            valid_from=T0,
            valid_to=T0 + timedelta(days=3),
            source="test",
            tokens=9,
            pinned=True,
            expires_at=T0 + timedelta(days=30),
            last_accessed_at=T0 + timedelta(hours=5),
            replaces=[str(uuid.uuid4())],
            replaced_count=4,
            code=CodeState(files={"src/db.py": "ab" * 20, "gone.py": None}, commit="cd" * 20, branch="main"),
        )
        secret = full.model_copy(update={"id": str(uuid.uuid4()), "text": "my password", "private": True})
        dense = await embedder.embed_documents([full.text, secret.text])
        bm25 = Bm25Encoder()
        await vectors.upsert(
            [
                MemoryRecord(memory=m, dense=v, sparse=bm25.encode_document(m.text))
                for m, v in zip([full, secret], dense, strict=True)
            ]
        )
    return settings


def public(state: dict[Scope, Any]) -> dict[Scope, Any]:
    """The source's state without its private memory (which no export carries)."""
    return {s: ([m for m in ms if not m.private], notes, links) for s, (ms, notes, links) in state.items()}


async def test_round_trip_into_another_data_dir_keeps_every_item(
    source: Settings, tmp_path: Path, embedder: Embedder
) -> None:
    target = make_settings(tmp_path / "target")
    file = tmp_path / "export.jsonl"

    exported = await export_file(source, file, projects=["test", "side"])
    imported = await import_file(target, file, embedder=embedder)

    assert exported.counts == {"memory": 7, "note": 4, "link": 3}
    assert exported.skipped_private == 1
    assert imported.written == exported.counts
    assert imported.embedded == 7  # no embeddings in the file: all made again
    assert await snapshot(target, embedder) == public(await snapshot(source, embedder))


async def test_import_with_embeddings_reuses_them(
    source: Settings, tmp_path: Path, embedder: Embedder
) -> None:
    target = make_settings(tmp_path / "target")
    file = tmp_path / "export.jsonl"
    await export_file(source, file, all_projects=True, with_embeddings=True)
    # Made-up vectors of the right size: if the import re-embedded, they would not survive.
    lines = file.read_text().splitlines()
    planted = [0.0] * (embedder.dimension - 1) + [1.0]
    lines = [
        json.dumps({**json.loads(line), "embedding": planted}) if '"item":"memory"' in line else line
        for line in lines
    ]
    file.write_text("\n".join(lines) + "\n")

    result = await import_file(target, file, embedder=embedder)

    assert result.embedded == 0
    async with stores(target, embedder) as (vectors, _):
        ids = [m.id for m in await memories_of(vectors, SCOPE)]
        assert all(v == pytest.approx(planted) for v in (await vectors.dense_vectors(SCOPE, ids)).values())


async def test_import_from_another_model_re_embeds(
    source: Settings, tmp_path: Path, embedder: Embedder
) -> None:
    target = make_settings(tmp_path / "target")
    file = tmp_path / "export.jsonl"
    await export_file(source, file, projects=["test"], with_embeddings=True)
    lines = file.read_text().splitlines()
    header = json.loads(lines[0])
    header["embedding"] = {"model": "other/model", "dimension": 3}
    items = [json.loads(line) for line in lines[1:]]
    for item in items:
        if item["item"] == "memory":
            item["embedding"] = [1.0, 0.0, 0.0]
    file.write_text("\n".join(json.dumps(x) for x in [header, *items]) + "\n")

    result = await import_file(target, file, embedder=embedder)

    assert result.embedded == result.in_file["memory"] == 5
    async with stores(target, embedder) as (vectors, _):
        ids = [m.id for m in await memories_of(vectors, SCOPE)]
        assert {len(v) for v in (await vectors.dense_vectors(SCOPE, ids)).values()} == {embedder.dimension}


async def test_import_twice_changes_nothing(source: Settings, tmp_path: Path, embedder: Embedder) -> None:
    target = make_settings(tmp_path / "target")
    file = tmp_path / "export.jsonl"
    await export_file(source, file, all_projects=True)
    await import_file(target, file, embedder=embedder)
    before = await snapshot(target, embedder)

    again = await import_file(target, file, embedder=embedder)

    assert again.written == {"memory": 0, "note": 0, "link": 0}
    assert again.unchanged == again.in_file
    assert again.embedded == 0
    assert await snapshot(target, embedder) == before


HEADER = {
    "format": "mcp-hybrid-memory",
    "version": 1,
    "exported_at": "2024-05-01T12:00:00Z",
    "scopes": [{"project": "test", "user": "default"}],
}
NOTE = {"item": "note", "id": "n1", "project": "test", "content": "x", "type": "fact"}
NOTE2 = {**NOTE, "id": "n2"}
LINK = {"item": "link", "from_id": "n1", "to_id": "n2", "relation": "supports", "project": "test"}


@pytest.mark.parametrize(
    ("lines", "problems"),
    [
        pytest.param(
            [HEADER, NOTE, "{broken", NOTE2],
            ["line 3: not valid JSON (Expecting property name enclosed in double quotes at column 2)"],
            id="broken-json",
        ),
        pytest.param(
            [HEADER, NOTE, {"item": "thing"}],
            ['line 3: unknown item \'thing\'; "item" is "memory", "note" or "link" on every line'],
            id="unknown-item",
        ),
        pytest.param(
            [HEADER, NOTE, NOTE2, {**LINK, "relation": "likes"}],
            [
                "line 4: link: relation: Input should be 'extends', 'contradicts', 'supports', "
                "'example_of', 'part_of', 'relates_to', 'answers', 'caused_by', 'temporal' or 'supersedes'"
            ],
            id="invalid-relation",
        ),
        pytest.param(
            [HEADER, NOTE, {**NOTE2, "project": "elsewhere"}, NOTE],
            [
                "line 3: scope (project 'elsewhere', user 'default') is not in the header",
                "line 4: note n1 already appears on line 2",
            ],
            id="scope-and-duplicate",
        ),
        pytest.param(
            [{**HEADER, "version": 2}, NOTE],
            [
                "line 1: format version 2 is not supported; this hybrid-memory reads version 1. "
                "Upgrade mcp-hybrid-memory."
            ],
            id="future-version",
        ),
        pytest.param(
            [HEADER, NOTE, LINK],
            [
                "line 3: link needs note n2, which is neither in the file nor in project 'test' "
                "(user 'default') of the target"
            ],
            id="dangling-link",
        ),
    ],
)
async def test_a_bad_file_is_rejected_whole_and_nothing_is_written(
    tmp_path: Path, embedder: Embedder, lines: list[Any], problems: list[str]
) -> None:
    target = make_settings(tmp_path / "target")
    file = tmp_path / "bad.jsonl"
    file.write_text("\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n")

    with pytest.raises(ImportFileError) as caught:
        await import_file(target, file, embedder=embedder)

    assert caught.value.problems == problems
    assert str(caught.value).startswith(f"{file} was not imported (nothing was written):")
    async with stores(target, embedder) as (vectors, graph):
        assert await graph.scopes() == []
        assert await vectors.scopes() == []


MCP_MEMORY = [
    {"type": "entity", "name": "John_Smith", "entityType": "person", "observations": ["Speaks Spanish"]},
    {"type": "entity", "name": "Anthropic", "entityType": "organization", "observations": []},
    {"type": "relation", "from": "John_Smith", "to": "Anthropic", "relationType": "works_at"},
    {"type": "relation", "from": "John_Smith", "to": "Acme", "relationType": "Part Of"},
]


async def test_mcp_memory_jsonl_becomes_notes_and_links_idempotently(
    tmp_path: Path, embedder: Embedder
) -> None:
    target = make_settings(tmp_path / "target")
    file = tmp_path / "memory.jsonl"
    file.write_text("\n".join(json.dumps(x) for x in MCP_MEMORY) + "\n")

    first = await import_file(target, file, embedder=embedder)
    second = await import_file(target, file, embedder=embedder)

    assert (first.format, first.written, first.indexed_notes) == ("mcp-memory", first.in_file, 4)
    assert second.written == {"memory": 0, "note": 0, "link": 0}
    async with stores(target, embedder) as (vectors, graph):
        notes, links = await graph_of(graph, SCOPE)
        by_id = {n.id: n for n in notes}
        assert sorted((n.content, n.type.value, tuple(n.tags)) for n in notes) == [
            ("Acme", "concept", ()),
            ("Anthropic (organization)", "concept", ("organization",)),
            ("John_Smith (person)", "concept", ("person", "rel:works_at")),
            ("Speaks Spanish", "fact", ()),
        ]
        assert sorted(
            (by_id[k.from_id].content, k.relation.value, by_id[k.to_id].content) for k in links
        ) == [
            ("John_Smith (person)", "part_of", "Acme"),
            ("John_Smith (person)", "relates_to", "Anthropic (organization)"),
            ("Speaks Spanish", "part_of", "John_Smith (person)"),
        ]
        # Each note also got its searchable copy, so recall finds it.
        assert len(await memories_of(vectors, SCOPE)) == 4


@pytest.mark.neo4j
async def test_round_trip_from_sqlite_into_neo4j_over_bolt(
    source: Settings, tmp_path: Path, embedder: Embedder, bolt_server: BoltTarget
) -> None:
    await bolt_server.delete_all_notes()
    neo4j = Neo4jSettings(
        uri=bolt_server.uri,
        user=bolt_server.user,
        password=None if bolt_server.password is None else SecretStr(bolt_server.password),
        database=bolt_server.database,
        dialect=bolt_server.dialect,
        timeout_s=30,
    )
    target = make_settings(tmp_path / "target").model_copy(update={"graph_backend": "neo4j", "neo4j": neo4j})
    file = tmp_path / "export.jsonl"
    await export_file(source, file, all_projects=True)

    first = await import_file(target, file, embedder=embedder)
    again = await import_file(target, file, embedder=embedder)

    assert first.written == first.in_file
    assert again.written == {"memory": 0, "note": 0, "link": 0}
    assert await snapshot(target, embedder) == public(await snapshot(source, embedder))
    # And back out of Neo4j: the same file, item for item (but for its export time).
    back = tmp_path / "back.jsonl"
    await export_file(target, back, all_projects=True)
    assert file.read_text().splitlines()[1:] == back.read_text().splitlines()[1:]


@pytest.mark.subprocess
def test_cli_exports_and_imports(tmp_path: Path) -> None:
    env = {**os.environ, "HYBRID_MEMORY_EMBEDDING_MODEL_PATH": str(model_dir()), "HYBRID_MEMORY_PROJECT": "p"}
    file = tmp_path / "memory.jsonl"
    file.write_text("\n".join(json.dumps(x) for x in MCP_MEMORY) + "\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "hybrid_memory", *args],
            env=env,
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )

    imported = run("import", str(file), "--data-dir", str(tmp_path / "a"))
    exported = run(
        "export", str(tmp_path / "out.jsonl"), "--data-dir", str(tmp_path / "a"), "--with-embeddings"
    )
    dry = run("import", str(tmp_path / "out.jsonl"), "--data-dir", str(tmp_path / "b"), "--dry-run")
    copied = run("import", str(tmp_path / "out.jsonl"), "--data-dir", str(tmp_path / "b"), "--quiet")
    bad = run("import", str(tmp_path / "nope.jsonl"), "--data-dir", str(tmp_path / "c"))

    assert imported.returncode == 0, imported.stderr
    assert imported.stdout.startswith(f"imported {file} (mcp-memory): 0 memories, 4 notes, 3 links; written")
    assert (
        exported.stdout
        == f"exported 4 memories, 4 notes, 3 links from 1 scope(s) to {tmp_path / 'out.jsonl'}\n"
    )
    assert dry.stdout.endswith("4 memories, 4 notes, 3 links; nothing written (--dry-run)\n")
    assert "0 memories embedded" in copied.stdout, copied.stderr
    assert "\r" not in copied.stderr  # no progress bar without a terminal
    assert bad.returncode == 1
    assert "nope.jsonl was not imported (nothing was written):" in bad.stderr


async def recall_all(
    settings: Settings, embedder: Embedder, queries: list[str], as_of: datetime
) -> list[Any]:
    async with stores(settings, embedder) as (vectors, graph):
        service = MemoryService(settings=settings, vectors=vectors, graph=graph, embedder=embedder)
        options = RecallOptions(limit=8, as_of=as_of)
        found = []
        for query in queries:
            result = await service.recall(SCOPE, query, options)
            found.append([(h.id, h.score, sorted(h.channels), h.ranks) for h in result.results])
        return found


@pytest.mark.parametrize("with_embeddings", [False, True], ids=["re-embedded", "embeddings-kept"])
async def test_recall_ranks_the_same_after_export_and_import(
    tmp_path: Path, embedder: Embedder, with_embeddings: bool
) -> None:
    original = make_settings(tmp_path / "original")
    async with stores(original, embedder) as (vectors, graph):
        service = MemoryService(settings=original, vectors=vectors, graph=graph, embedder=embedder)
        turns = [
            ("user", "Which database should the billing ledger use, Postgres or MongoDB?"),
            ("assistant", "Postgres: you need transactions across accounts."),
            ("user", "And how often do we back it up?"),
            ("assistant", "Nightly, with point-in-time recovery kept for a week."),
            ("user", "Thanks, go ahead."),
        ]
        messages = [
            MessageIn(role=role, content=text, id=f"m{i}", created_at=T0 + timedelta(minutes=i))
            for i, (role, text) in enumerate(turns)
        ]
        await service.remember_thread(SCOPE, ThreadDraft("billing", messages))
        await service.create_note(
            SCOPE, NoteDraft(content="The ledger runs on Postgres", type=NoteType.DECISION)
        )
        await service.create_note(
            SCOPE, NoteDraft(content="Backups are nightly with PITR", type=NoteType.FACT)
        )
    queries = ["ledger database choice", "backup schedule", "transactions across accounts", "go ahead"]
    as_of = datetime.now(UTC) + timedelta(days=1)
    file = tmp_path / "export.jsonl"
    before = await recall_all(original, embedder, queries, as_of)

    await export_file(original, file, with_embeddings=with_embeddings)
    imported = await import_file(make_settings(tmp_path / "copy"), file, embedder=embedder)
    after = await recall_all(make_settings(tmp_path / "copy"), embedder, queries, as_of)

    assert imported.embedded == (0 if with_embeddings else 7)
    assert any("context" in channels for hits in before for _, _, channels, _ in hits)
    assert [[(i, c, r) for i, _, c, r in hits] for hits in after] == [
        [(i, c, r) for i, _, c, r in hits] for hits in before
    ]
    for hits_after, hits_before in zip(after, before, strict=True):
        assert [s for _, s, _, _ in hits_after] == pytest.approx([s for _, s, _, _ in hits_before], abs=1e-6)
