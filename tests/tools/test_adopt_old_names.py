"""Stores written when a project was its folder's name keep every memory under the repository's name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mcp import Client

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.projects import legacy_project_name, root_uri
from hybrid_memory.server import build_server
from tests.conftest import make_settings
from tests.tools.helpers import call
from tests.tools.test_lifecycle import roots_of
from tests.unit.test_projects import repo

THREAD = [
    {"role": "user", "content": "Which database pool size do we use in production?", "id": "m0"},
    {"role": "assistant", "content": "The pool size is 20, set in src/db.py.", "id": "m1"},
    {"role": "user", "content": "Keep deploys on Thursdays only.", "id": "m2"},
]


async def _everything(client: Client, note_id: str = "") -> dict[str, Any]:
    """What a project holds, as a person would check it: threads, texts, counts, a note's links."""
    links: list[tuple[str, str, str]] = []
    if note_id:
        walk = await call(client, "get_linked_notes", note_id=note_id)
        links = sorted((k["from_id"], k["to_id"], k["relation"]) for k in walk["links"])
    threads = (await call(client, "list_threads"))["threads"]
    recalled = await call(client, "recall_memory", query="pool size deploys Postgres Thursdays", limit=50)
    stats = await call(client, "memory_stats")
    return {
        "threads": threads,
        "texts": sorted(h["text"] for h in recalled["results"]),
        "counts": (stats["items"], stats["notes"], stats["pinned"]),
        "links": links,
    }


async def test_a_store_written_under_the_folder_name_moves_whole_to_the_repository(
    tmp_path: Path, embedder: Embedder
) -> None:
    alice, bob = repo(tmp_path / "alice" / "api"), repo(tmp_path / "bob" / "api")
    old_name = legacy_project_name(root_uri(alice))
    assert old_name == "api"
    # Written as the released code wrote it: every session in a folder named api used project "api".
    settings = make_settings(tmp_path / "data")
    old_server = build_server(settings.model_copy(update={"project": old_name}), embedder=embedder)
    async with Client(old_server) as old:
        await call(old, "remember_thread", thread_id="s1", messages=THREAD)
        first = await call(old, "create_note", content="We use Postgres with a pool of 20.", type="decision")
        second = await call(old, "create_note", content="Deploys happen on Thursdays.", type="fact")
        await call(old, "create_link", from_id=second["id"], to_id=first["id"], relation="relates_to")
        await call(old, "pin_memory", memory_id=first["id"])
        before = await _everything(old, second["id"])
    assert before["counts"] == (5, 2, 1)

    server = build_server(settings.model_copy(update={"project": None}), embedder=embedder)
    async with Client(server, list_roots_callback=roots_of(root_uri(alice))) as moved:
        after = await _everything(moved, second["id"])
        again = await call(moved, "remember_thread", thread_id="s1", messages=THREAD)
        stats = await call(moved, "memory_stats")
    async with Client(server, list_roots_callback=roots_of(root_uri(bob))) as other:
        elsewhere = await _everything(other)
    async with Client(old_server) as old:
        left = await _everything(old)

    assert after == before
    assert stats["project"] == str(alice)
    assert (again["stored"], again["unchanged"]) == (0, 3)  # the moved messages are the ones it remembers
    assert (second["id"], first["id"], "relates_to") in before["links"]
    assert elsewhere == {"threads": [], "texts": [], "counts": (0, 0, 0), "links": []}
    assert left == {"threads": [], "texts": [], "counts": (0, 0, 0), "links": []}
