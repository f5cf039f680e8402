"""Sessions fill the SQLite graph: notes reinforced when said again, replaced when changed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybrid_memory.backends.in_memory_vectors import InMemoryVectorStore
from hybrid_memory.backends.sqlite_graph import SqliteGraphStore
from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.models import MemoryFilter, MemoryKind, MessageIn, Note, NoteFilter, Scope, Walk
from hybrid_memory.service import MemoryService
from hybrid_memory.service.knowledge import thread_summary
from hybrid_memory.service.recall import RecallOptions
from hybrid_memory.service.writes.drafts import ThreadDraft
from hybrid_memory.service.writes.threads import memory_id
from hybrid_memory.settings import LifecycleSettings, Settings
from tests.fakes import FakeEmbedder
from tests.local_http import JsonHandler, LocalApiServer, serving

SCOPE = Scope(project="ledger")
STORY = "We use Postgres 16 for billing, not MySQL. Tests run with `make test`. Never push to main directly."


async def _service(tmp_path: Path, lifecycle: LifecycleSettings | None = None) -> MemoryService:
    embedder = FakeEmbedder()
    vectors, graph = InMemoryVectorStore(), SqliteGraphStore(tmp_path / "graph.db")
    await vectors.open(dimension=embedder.dimension, model=embedder.model_name)
    await graph.open()
    settings = Settings(data_dir=tmp_path, project=SCOPE.project, lifecycle=lifecycle or LifecycleSettings())
    return MemoryService(settings=settings, vectors=vectors, graph=graph, embedder=embedder)


async def _say(service: MemoryService, thread: str, *turns: tuple[str, str]) -> None:
    messages = [
        MessageIn(role=role, content=text, id=f"{thread}-{i}") for i, (role, text) in enumerate(turns)
    ]
    await service.remember_thread(SCOPE, ThreadDraft(thread_id=thread, messages=messages), harvest=True)


async def _notes(service: MemoryService, *, live: bool = True) -> list[Note]:
    from hybrid_memory.models import utcnow

    flt = NoteFilter(scope=SCOPE, valid_at=utcnow() if live else None)
    return await service.stores.graph.list_notes(flt, 500)


def _captured(notes: list[Note]) -> dict[str, Note]:
    return {
        n.content: n
        for n in notes
        if "captured" in n.tags and not any(t.startswith("entity:") for t in n.tags)
    }


async def test_a_rule_stated_again_reinforces_its_note_and_a_change_supersedes_it(tmp_path: Path) -> None:
    service = await _service(tmp_path)
    await _say(
        service,
        "s1",
        ("user", STORY),
        ("assistant", "Understood."),
    )
    first = _captured(await _notes(service))
    assert set(first) == {
        "We use Postgres 16 for billing, not MySQL.",
        "Tests run with `make test`.",
        "Never push to main directly.",
    }
    rule = first["Never push to main directly."]
    assert rule.type.value == "decision"
    assert {"captured", "rule", "src:" + _memory_id("s1-0")} <= set(rule.tags)

    await _say(service, "s2", ("user", "Remember: never push to main directly."))
    again = _captured(await _notes(service))
    assert set(again) == set(first)  # no copy
    reinforced = again["Never push to main directly."]
    assert (reinforced.importance or 0) > (rule.importance or 1)
    assert "src:" + _memory_id("s2-0") in reinforced.tags

    await _say(service, "s3", ("user", "We moved billing from Postgres 16 to CockroachDB."))
    live = _captured(await _notes(service))
    assert "We use Postgres 16 for billing, not MySQL." not in live
    assert "We moved billing from Postgres 16 to CockroachDB." in live
    old = _captured(await _notes(service, live=False))["We use Postgres 16 for billing, not MySQL."]
    assert old.valid_to is not None
    hood = await service.linked_notes(SCOPE, Walk(note_id=old.id))
    assert hood.notes[0].superseded_by == live["We moved billing from Postgres 16 to CockroachDB."].id

    # Read again (a lost offset file): nothing new, nothing reinforced twice.
    before = {n.id: (n.tags, n.importance) for n in await _notes(service, live=False)}
    links = await service.stores.graph.list_links(SCOPE, 500)
    await _say(
        service,
        "s1",
        ("user", STORY),
        ("assistant", "Understood."),
    )
    assert {n.id: (n.tags, n.importance) for n in await _notes(service, live=False)} == before
    assert len(await service.stores.graph.list_links(SCOPE, 500)) == len(links)


async def test_entities_link_the_files_a_session_touched_to_its_session_and_its_digest_is_its_summary(
    tmp_path: Path,
) -> None:
    service = await _service(tmp_path)
    await _say(
        service,
        "s1",
        ("user", "Fix the login bug in src/auth.py. Never log tokens."),
        ("assistant", "(read src/auth.py)"),
        ("assistant", "(edited src/auth.py)"),
        ("assistant", "(tests failed: pytest -q tests/test_auth.py)"),
        ("assistant", "The fix is in; one test still fails, left for later."),
    )
    notes = await _notes(service)
    by_content = {n.content: n for n in notes}
    auth = by_content["File src/auth.py"]
    assert {"captured", "entity:file"} <= set(auth.tags)
    hood = await service.linked_notes(SCOPE, Walk(note_id=auth.id, depth=1))
    assert [n.content for n in hood.notes[1:]] == [
        "Session s1: Fix the login bug in src/auth.py. Never log tokens."
    ]
    assert "Command pytest" in by_content
    summary = await service.stores.vectors.get(SCOPE, [thread_summary.summary_id(SCOPE, "s1")])
    assert summary[0].kind is MemoryKind.SUMMARY
    assert summary[0].text == (
        "Asked: Fix the login bug in src/auth.py. Never log tokens.\n"
        "Changed: edited src/auth.py; ran pytest (failed)\n"
        "Decided: Never log tokens.\n"
        "Open: tests failing: pytest -q tests/test_auth.py; "
        "The fix is in; one test still fails, left for later."
    )
    assert await service.stores.vectors.count(MemoryFilter(scope=SCOPE, kinds=[MemoryKind.SUMMARY])) == 1


def _memory_id(message_id: str) -> str:
    return memory_id(SCOPE, message_id.split("-")[0], message_id, 0)


LONG_ANSWER = " ".join(
    f"Step {i}: the session cookie is checked, then the user record is loaded and compared."
    for i in range(30)
)
MODEL_DIGEST = "Sure, here it is.\nAsked: a login fix\nChanged: edited src/auth.py\nOpen: one failing test"


class ChatHandler(JsonHandler):
    server: LocalApiServer

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.requests.append(body)
        choice = {
            "index": 0,
            "message": {"role": "assistant", "content": MODEL_DIGEST},
            "finish_reason": "stop",
        }
        answer = {
            "id": "c1",
            "object": "chat.completion",
            "created": 0,
            "model": body["model"],
            "choices": [choice],
        }
        self._reply(200 if body["model"] == "digester" else 500, answer)


async def test_tool_uses_stored_as_fields_give_entities_and_the_digest_without_lines_in_the_text(
    tmp_path: Path,
) -> None:
    service = await _service(tmp_path)
    uses = [
        {"verb": "edited", "path": "src/billing.py"},
        {"verb": "ran", "command": "make deploy", "outcome": "failed", "error": "KeyError: 'region'"},
    ]
    messages = [
        MessageIn(role="user", content="Move the invoice rounding into src/billing.py please.", id="f-0"),
        MessageIn.model_validate(
            {"role": "assistant", "content": "Moved it.", "id": "f-1", "activity": uses}
        ),
    ]
    await service.remember_thread(SCOPE, ThreadDraft(thread_id="f", messages=messages), harvest=True)

    [stored] = await service.stores.vectors.get(SCOPE, [memory_id(SCOPE, "f", "f-1", 0)])
    assert [u.model_dump(exclude_none=True) for u in stored.activity] == uses
    contents = {n.content for n in await _notes(service)}
    assert {"File src/billing.py", "Command make deploy", "Error KeyError: '…'"} <= contents
    summary = await service.stores.vectors.get(SCOPE, [thread_summary.summary_id(SCOPE, "f")])
    assert "Changed: edited src/billing.py; ran make deploy (failed)" in summary[0].text.splitlines()


async def test_a_configured_model_writes_the_digest_and_a_failing_one_leaves_the_deterministic_digest(
    tmp_path: Path,
) -> None:
    turns = (("user", "Fix the login bug in src/auth.py."), ("assistant", "(edited src/auth.py)"))
    with serving(LocalApiServer(ChatHandler)) as api:
        for model, expected in (
            ("digester", "Asked: a login fix\nChanged: edited src/auth.py\nOpen: one failing test"),
            ("broken", "Asked: Fix the login bug in src/auth.py.\nChanged: edited src/auth.py"),
        ):
            lifecycle = LifecycleSettings(
                summary_model=model, summary_base_url=api.base_url, summary_timeout_s=10
            )
            service = await _service(tmp_path / model, lifecycle)
            await _say(service, "s1", *turns)
            [summary] = await service.stores.vectors.get(SCOPE, [thread_summary.summary_id(SCOPE, "s1")])
            assert summary.text == expected
    assert [r["model"] for r in api.requests] == ["digester", "broken"]
    assert "[memory:" in api.requests[0]["messages"][1]["content"]


async def test_recall_about_a_file_reaches_the_turns_of_every_session_that_touched_it(tmp_path: Path) -> None:
    service = await _service(tmp_path)
    # The first session's turn says a lot besides the file: its own match for the path is weak.
    long_turn = LONG_ANSWER + "\n(read src/auth.py)"
    await _say(service, "s1", ("user", "Why does login fail for new users?"), ("assistant", long_turn))
    await _say(service, "s2", ("user", "Add rate limiting to login."), ("assistant", "(edited src/auth.py)"))
    found = await service.recall(SCOPE, "src/auth.py", RecallOptions(limit=10))
    assert found.results[0].text == "File src/auth.py"
    [entity] = await service.stores.graph.get_notes(SCOPE, [found.results[0].id])
    cited = [t.removeprefix("src:") for t in entity.tags if t.startswith("src:")]
    assert len(cited) == 2  # a chunk of the long turn and the second session's turn
    by_id = {hit.id: hit for hit in found.results}
    assert set(cited) <= set(by_id)
    assert any("neighbour" in by_id[turn].channels for turn in cited)  # reached through the file's node


async def test_a_new_value_of_one_setting_supersedes_the_old_and_another_topic_does_not(
    tmp_path: Path,
) -> None:
    service = await _service(tmp_path)
    await _say(
        service,
        "s1",
        ("user", "Set the access token TTL to 15 minutes. We use Redis 7 for the session cache."),
    )
    await _say(
        service,
        "s2",
        ("user", "Set the access token TTL to 30 minutes. We use Redis 7 for the rate limiter."),
    )
    live = _captured(await _notes(service))
    assert set(live) == {
        "Set the access token TTL to 30 minutes.",
        "We use Redis 7 for the session cache.",
        "We use Redis 7 for the rate limiter.",
    }


async def test_notes_drawn_from_a_private_thread_are_private(tmp_path: Path) -> None:
    service = await _service(tmp_path)
    messages = [MessageIn(role="user", content="Never commit the staging keys.", id="p-0")]
    await service.remember_thread(
        SCOPE, ThreadDraft(thread_id="p", messages=messages, private=True), harvest=True
    )
    notes = await _notes(service)
    assert notes
    copies = await service.stores.vectors.get(SCOPE, [n.id for n in notes])
    assert len(copies) == len(notes)
    assert all(m.private for m in copies)


async def test_a_raised_version_supersedes_the_rule_naming_the_old_one_and_not_a_number_that_contains_it(
    tmp_path: Path,
) -> None:
    service = await _service(tmp_path)
    await _say(
        service,
        "s1",
        (
            "user",
            "This package's minimum is Node 18, so don't use fetch streams. "
            "Our minimum image is Node 180-alpine.",
        ),
    )
    await _say(service, "s2", ("user", "We're raising the minimum from Node 18 to Node 20."))
    live = _captured(await _notes(service))
    assert set(live) == {
        "Our minimum image is Node 180-alpine.",
        "We're raising the minimum from Node 18 to Node 20.",
    }


@pytest.mark.model
async def test_capture_keeps_casual_statements_and_bare_answers_and_leaves_pastes(
    tmp_path: Path, embedder: Embedder
) -> None:
    vectors, graph = InMemoryVectorStore(), SqliteGraphStore(tmp_path / "graph.db")
    await vectors.open(dimension=embedder.dimension, model=embedder.model_name)
    await graph.open()
    settings = Settings(data_dir=tmp_path, project=SCOPE.project)
    service = MemoryService(settings=settings, vectors=vectors, graph=graph, embedder=embedder)
    await _say(
        service,
        "casual",
        ("user", "dont use /tmp keep everything within the claude dir"),
        (
            "assistant",
            "Understood. The screensaver starts after 2.5 minutes. What would you like it changed to?",
        ),
        ("user", "10 minutes"),
        ("assistant", "Done."),
        ("user", "SyntaxError: from __future__ imports must occur at the beginning of the file."),
        ("assistant", "Fixed the import order."),
        ("user", "can you also fix the login bug"),
    )
    captured = _captured(await _notes(service))
    assert set(captured) == {
        "Dont use /tmp keep everything within the claude dir.",
        "10 minutes (asked: What would you like it changed to?)",
    }
    assert {n.content: ("rule" in n.tags) for n in captured.values()} == {
        "Dont use /tmp keep everything within the claude dir.": True,
        "10 minutes (asked: What would you like it changed to?)": False,
    }
