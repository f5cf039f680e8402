"""What the viewer reads: projects, the newest memories, and a recall that leaves no trace."""

from __future__ import annotations

from datetime import timedelta

from hybrid_memory.models import MemoryFilter, NoteType, Scope, utcnow
from hybrid_memory.service import NoteDraft, RecallOptions, ThreadDraft

from .conftest import SCOPE, Harness, messages


async def test_projects_lists_the_users_projects_holding_memories_or_notes(harness: Harness) -> None:
    await harness.service.remember_thread(SCOPE, ThreadDraft("t", messages("Hello there.")))
    await harness.service.create_note(
        Scope(project="notes-only"), NoteDraft(content="A lone note.", type=NoteType.FACT)
    )
    await harness.service.remember_thread(
        Scope(project="someone-else", user="other"), ThreadDraft("t", messages("Not yours."))
    )

    assert await harness.service.projects() == ["notes-only", "test"]


async def test_recent_returns_the_newest_memories_first_within_the_limit(harness: Harness) -> None:
    await harness.service.remember_thread(SCOPE, ThreadDraft("t", messages("one", "two", "three")))
    old = (await harness.vectors.scroll(MemoryFilter(scope=SCOPE), 10))[0]
    by_text = {m.text: m for m in old}
    # Age the first message by a year: the windows must widen to find it.
    await harness.vectors.set_payload(
        SCOPE, by_text["one"].id, {"created_at": utcnow() - timedelta(days=400)}
    )
    note = await harness.service.create_note(SCOPE, NoteDraft(content="A fresh note.", type=NoteType.FACT))

    newest = await harness.service.recent(SCOPE, 3)
    everything = await harness.service.recent(SCOPE, 10)

    assert [m.created_at for m in newest] == sorted((m.created_at for m in newest), reverse=True)
    assert newest[0].id == note.id
    assert len(newest) == 3
    assert [m.text for m in everything][-1] == "one"
    assert everything[-1].created_at < utcnow() - timedelta(days=365)
    assert len(everything) == 4


async def test_recall_without_recording_changes_no_access_count_nor_the_hit_rate(harness: Harness) -> None:
    await harness.service.remember_thread(SCOPE, ThreadDraft("t", messages("The ledger lives in Postgres.")))
    before = await harness.vectors.scroll(MemoryFilter(scope=SCOPE), 10)

    found = await harness.service.recall(SCOPE, "where is the ledger", RecallOptions(), record=False)

    assert found.results
    assert await harness.vectors.scroll(MemoryFilter(scope=SCOPE), 10) == before
    assert (await harness.service.stats(SCOPE)).recalls == 0
    await harness.service.recall(SCOPE, "where is the ledger", RecallOptions())
    assert (await harness.service.stats(SCOPE)).recalls == 1


async def test_the_viewer_lists_repositories_by_folder_told_apart_from_namesakes(harness: Harness) -> None:
    from hybrid_memory.tools.app import AppContext
    from hybrid_memory.viewer.source import ViewerSource

    for project in ("/home/ana/alice/api", "/home/ana/bob/api", "/home/ana/web"):
        await harness.service.remember_thread(Scope(project=project), ThreadDraft("t", messages("Hi.")))
    app = AppContext(SCOPE)
    app.attach(harness.service)

    async def running() -> AppContext:
        return app

    listed = await ViewerSource(running).projects()

    assert listed["labels"] == {
        "/home/ana/alice/api": "alice/api",
        "/home/ana/bob/api": "bob/api",
        "/home/ana/web": "web",
    }
    assert listed["projects"] == ["/home/ana/alice/api", "/home/ana/bob/api", "/home/ana/web"]
