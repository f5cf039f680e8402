"""Lifecycle through the MCP tools: redaction, pins, the context block, time, scopes, limits."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.session import ClientRequestContext, ListRootsFnT
from mcp.server.mcpserver import MCPServer
from mcp_types import ListRootsResult, Root

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.server import build_server
from hybrid_memory.settings import LifecycleSettings, Settings
from tests.conftest import make_settings
from tests.tools.helpers import call, call_error

SECRET_THREAD = [
    {"role": "user", "content": "My OpenAI key is sk-proj-abcdefghijklmnop1234, keep it.", "id": "s1"},
    {"role": "assistant", "content": "Noted. password=hunter2 is also set.", "id": "s2"},
]


def msg(i: int, text: str | None = None) -> dict[str, Any]:
    return {"role": "user", "content": text or f"Message number {i} is about topic {i}.", "id": f"m{i}"}


async def test_secrets_are_redacted_before_storing_and_counted(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        result = await call(client, "remember_thread", thread_id="t", messages=SECRET_THREAD)
        assert result["redacted"] == 2
        note = await call(
            client,
            "create_note",
            content="Deploy token: ghp_0123456789abcdefghijABCDEFGHIJ012345",
            type="fact",
        )
        assert note["redacted"] == 1
        assert note["content"] == "Deploy token: [REDACTED:github_token]"
        hits = await call(client, "recall_memory", query="OpenAI key password", limit=10, kinds=["message"])
        texts = sorted(h["text"] for h in hits["results"])
        assert texts == [
            "My OpenAI key is [REDACTED:api_key], keep it.",
            "Noted. password=[REDACTED:secret] is also set.",
        ]


async def test_pin_and_unpin_a_memory_and_a_note(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        stored = await call(client, "remember_thread", thread_id="t", messages=[msg(1)])
        note = await call(client, "create_note", content="The user's name is Ada.", type="fact")
        for memory_id in (stored["memory_ids"][0], note["id"]):
            pinned = await call(client, "pin_memory", memory_id=memory_id)
            assert (pinned["pinned"], pinned["changed"]) == (True, True)
            again = await call(client, "pin_memory", memory_id=memory_id)
            assert (again["pinned"], again["changed"]) == (True, False)
        context = await call(client, "get_memory_context", query="unrelated weather")
        assert {c["id"] for c in context["core"]} == {stored["memory_ids"][0], note["id"]}
        # a pinned note stays pinned when edited
        updated = await call(client, "update_note", note_id=note["id"], content="The user's name is Ada L.")
        assert updated["pinned"] is True
        unpinned = await call(client, "unpin_memory", memory_id=note["id"])
        assert (unpinned["pinned"], unpinned["changed"]) == (False, True)
        context = await call(client, "get_memory_context", query="unrelated weather")
        assert [c["id"] for c in context["core"]] == [stored["memory_ids"][0]]


async def test_memory_context_cites_sources_and_never_exceeds_the_budget(
    server: MCPServer[Any], embedder: Embedder
) -> None:
    async with Client(server) as client:
        stored = await call(client, "remember_thread", thread_id="t", messages=[msg(i) for i in range(12)])
        note = await call(
            client, "create_note", content="The user prefers tea over coffee.", type="preference"
        )
        await call(client, "pin_memory", memory_id=note["id"])
        full = await call(client, "get_memory_context", query="topic 3", thread_id="t", max_tokens=1500)
        assert full["core"][0]["id"] == note["id"]
        assert full["text"].startswith("Core memory:\n- [memory:" + note["id"] + "] The user prefers tea")
        assert "Working memory (this thread):" in full["text"]
        assert full["working"][0]["id"] == stored["memory_ids"][-1]  # newest first
        assert full["tokens"] == embedder.count_tokens(full["text"]) <= 1500
        for item in full["core"] + full["working"] + full["recalled"]:
            assert f"[memory:{item['id']}]" in full["text"]
        for budget in (1, 5, 20, 40, 77, 120, 300):
            ctx = await call(client, "get_memory_context", query="topic 3", thread_id="t", max_tokens=budget)
            assert ctx["tokens"] == (embedder.count_tokens(ctx["text"]) if ctx["text"] else 0)
            assert ctx["tokens"] <= budget, budget
            assert ctx["omitted"] > 0
        assert (await call(client, "get_memory_context", query="topic 3", max_tokens=1))["text"] == ""


async def test_recall_as_of_answers_as_memory_stood_then(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        old = await call(client, "create_note", content="The office is in Berlin.", type="fact")
        between = datetime.now(UTC)
        await anyio.sleep(0.01)  # no clock assertion: only two instants that must differ
        new = await call(client, "create_note", content="The office moved to Lisbon.", type="fact")
        await call(client, "create_link", from_id=new["id"], to_id=old["id"], relation="supersedes")
        now = await call(client, "recall_memory", query="where is the office", kinds=["note"], limit=5)
        assert [r["id"] for r in now["results"]] == [new["id"]]
        then = await call(
            client, "recall_memory", query="where is the office", kinds=["note"], as_of=between.isoformat()
        )
        assert [r["id"] for r in then["results"]] == [old["id"]]
        before_all = await call(
            client, "recall_memory", query="office", as_of=(between - timedelta(days=1)).isoformat()
        )
        assert before_all["results"] == []


async def test_near_duplicate_note_returns_the_existing_one_unless_forced(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        first = await call(
            client, "create_note", content="The user's dog is a beagle called Biscuit.", type="fact"
        )
        assert first["duplicate"] is False
        again = await call(
            client, "create_note", content="The user's dog is a beagle called Biscuit!", type="fact"
        )
        assert again["id"] == first["id"]
        assert again["duplicate"] is True
        assert again["similarity"] >= 0.95
        other = await call(
            client, "create_note", content="The user's cat is a tabby called Miso.", type="fact"
        )
        assert other["duplicate"] is False
        forced = await call(
            client,
            "create_note",
            content="The user's dog is a beagle called Biscuit!",
            type="fact",
            force=True,
        )
        assert forced["id"] != first["id"]
        assert forced["duplicate"] is False


def roots_of(uri: str) -> ListRootsFnT:
    async def list_roots(context: ClientRequestContext) -> ListRootsResult:
        return ListRootsResult(roots=[Root(uri=uri)])

    return list_roots


async def test_two_projects_on_one_data_dir_never_see_each_other(tmp_path: Path, embedder: Embedder) -> None:
    settings = make_settings(tmp_path / "data").model_copy(update={"project": None})
    server = build_server(settings, embedder=embedder)
    async with Client(server, list_roots_callback=roots_of("file:///home/u/alpha")) as alpha:
        a = await call(alpha, "remember_thread", thread_id="shared", messages=[msg(1, "Alpha secret plan.")])
        note = await call(alpha, "create_note", content="Alpha uses Postgres.", type="decision")
        task = await call(alpha, "record_task", description="alpha deploy", outcome="worked", success=True)
        await call(alpha, "pin_memory", memory_id=note["id"])
    async with Client(server, list_roots_callback=roots_of("file:///home/u/beta")) as beta:
        assert (await call(beta, "list_threads"))["threads"] == []
        assert (await call(beta, "recall_memory", query="Alpha Postgres plan deploy", limit=50))[
            "results"
        ] == []
        ctx = await call(beta, "get_memory_context", query="Alpha", thread_id="shared")
        assert ctx["text"] == ""
        stats = await call(beta, "memory_stats")
        assert (stats["project"], stats["items"], stats["notes"]) == ("/home/u/beta", 0, 0)
        assert (await call(beta, "forget_preview"))["total"] == 0
        for memory_id in (a["memory_ids"][0], note["id"], task["id"]):
            assert "No memory or note" in await call_error(beta, "pin_memory", memory_id=memory_id)
            assert "Nothing to forget" in await call_error(beta, "forget", ids=[memory_id])
        assert "No note" in await call_error(beta, "get_linked_notes", note_id=note["id"])
        assert "No note" in await call_error(beta, "update_note", note_id=note["id"], content="x")
        dup = await call(beta, "create_note", content="Alpha uses Postgres.", type="decision")
        assert dup["duplicate"] is False
    async with Client(server) as no_roots:  # no roots: the default project
        assert (await call(no_roots, "memory_stats"))["project"] == "default"
    async with Client(server, list_roots_callback=roots_of("file:///home/u/alpha")) as alpha:
        stats = await call(alpha, "memory_stats")
        assert (stats["project"], stats["items"], stats["pinned"]) == ("/home/u/alpha", 3, 1)


async def remember(client: Client, thread_id: str, messages: list[dict[str, Any]]) -> None:
    await call(client, "remember_thread", thread_id=thread_id, messages=messages)


def limited(tmp_path: Path, embedder: Embedder, **limits: Any) -> MCPServer[Any]:
    settings: Settings = make_settings(tmp_path / "data")
    settings = settings.model_copy(update={"lifecycle": LifecycleSettings(**limits)})
    return build_server(settings, embedder=embedder)


async def test_a_burst_of_writes_ends_within_max_items_with_a_summary(
    tmp_path: Path, embedder: Embedder
) -> None:
    server = limited(tmp_path, embedder, max_items=5, eviction_policy="fifo")
    async with Client(server) as client:
        keep = await call(client, "create_note", content="Pinned: the user is called Ada.", type="fact")
        await call(client, "pin_memory", memory_id=keep["id"])
        async with anyio.create_task_group() as tg:
            for t in range(8):
                tg.start_soon(remember, client, f"t{t}", [msg(2 * t), msg(2 * t + 1)])
        stats = await call(client, "memory_stats")
        assert stats["items"] <= 5
        assert stats["pinned"] == 1
        assert stats["evictions"] >= 12
        summaries = await call(client, "recall_memory", query="earlier memories", kinds=["summary"], limit=5)
        assert len(summaries["results"]) == 1
        assert summaries["results"][0]["text"].startswith("Summary of ")
        context = await call(client, "get_memory_context", query="anything")
        assert [c["id"] for c in context["core"]] == [keep["id"]]


async def test_max_tokens_is_enforced_under_concurrent_writes(tmp_path: Path, embedder: Embedder) -> None:
    server = limited(tmp_path, embedder, max_tokens=60, summarize_on_evict=False)
    async with Client(server) as client:
        async with anyio.create_task_group() as tg:
            for t in range(6):
                tg.start_soon(remember, client, f"t{t}", [msg(t)])
        stats = await call(client, "memory_stats")
        assert 0 < stats["tokens"] <= 60
        assert stats["by_kind"][2] == {"kind": "summary", "count": 0, "tokens": 0}


async def test_forget_preview_is_a_dry_run_and_cleanup_applies_it(tmp_path: Path, embedder: Embedder) -> None:
    server = limited(tmp_path, embedder, retention_days=30)
    async with Client(server) as client:
        old = datetime(2020, 1, 1, tzinfo=UTC).isoformat()
        await call(client, "remember_thread", thread_id="t", messages=[{**msg(1), "created_at": old}, msg(2)])
        preview = await call(client, "forget_preview")
        assert preview["total"] == 1
        assert preview["items"][0]["reason"] == "expired"
        assert (await call(client, "memory_stats"))["items"] == 2  # nothing changed
        done = await call(client, "cleanup_memory")
        assert (done["deleted"], done["evicted"]) == (1, 0)
        assert (await call(client, "memory_stats"))["items"] == 1


async def test_record_task_is_a_task_memory(server: MCPServer[Any]) -> None:
    async with Client(server) as client:
        task = await call(
            client, "record_task", description="Migrate the DB", outcome="Failed: lock timeout", success=False
        )
        assert task["text"] == "Task: Migrate the DB\nOutcome (failed): Failed: lock timeout"
        hits = await call(client, "recall_memory", query="database migration", kinds=["task"])
        assert [h["id"] for h in hits["results"]] == [task["id"]]
        assert set(hits["results"][0]["tags"]) == {"task", "failure"}
        stats = await call(client, "memory_stats")
        assert stats["recalls"] == 1
        assert stats["recall_hit_rate"] == 1.0
