"""``hybrid_memory.transfer.sync``: the conflict rule and project names with literal inputs, and two
services over a folder remote (real stores, a fake embedder)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import anyio
import pytest

from hybrid_memory.models import Link, Memory, MemoryKind, Note, NoteType, Relation, Scope
from hybrid_memory.server.app import open_app
from hybrid_memory.service import NoteDraft, NoteUpdate
from hybrid_memory.transfer.sync import sync
from hybrid_memory.transfer.sync.apply import resolve
from hybrid_memory.transfer.sync.changes import Changes, key_of, merge
from hybrid_memory.transfer.sync.identity import local_projects, normalise_url, remote_url
from hybrid_memory.transfer.sync.remote import GitRemote, change_files
from tests.conftest import make_settings
from tests.fakes import FakeEmbedder

REPO = "github.com/ada/ledger"
T1, T2 = datetime(2026, 3, 1, tzinfo=UTC), datetime(2026, 3, 2, tzinfo=UTC)


@pytest.mark.parametrize(
    "url",
    [
        "git@github.com:ada/ledger.git",
        "https://github.com/ada/ledger",
        "https://user@GitHub.com/ada/ledger.git/",
        "ssh://git@github.com:22/ada/ledger.git",
    ],
)
def test_every_spelling_of_a_remote_names_one_project(url: str) -> None:
    assert normalise_url(url) == REPO


def test_a_clone_is_named_by_its_origin_and_found_wherever_it_is(tmp_path: Path) -> None:
    clone = tmp_path / "elsewhere" / "ledger"
    (clone / ".git").mkdir(parents=True)
    (clone / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (clone / ".git" / "config").write_text(
        '[core]\n\tbare = false\n[remote "upstream"]\n\turl = https://example.org/x.git\n'
        '[remote "origin"]\n\turl = git@github.com:ada/ledger.git\n\tfetch = +refs/heads/*\n'
    )
    assert remote_url(clone / "src") == "git@github.com:ada/ledger.git"
    assert local_projects(["default"], str(clone / "src")) == {
        REPO: str(clone.resolve()),
        "default": "default",
    }


def _note(content: str, modified: datetime) -> Note:
    return Note(id="n1", project=REPO, content=content, type=NoteType.FACT, created=T1, modified=modified)


def _copy(note: Note, pinned: bool) -> Memory:
    return Memory(id=note.id, kind=MemoryKind.NOTE, text=note.content, project=REPO, pinned=pinned)


def _changes(*items: Note | Memory | Link, forgotten: tuple[Note | Memory | Link, ...] = ()) -> Changes:
    return Changes({key_of(i): i for i in items}, {key_of(i) for i in forgotten})


def test_a_note_changed_on_both_sides_keeps_the_later_modified_with_its_searchable_copy() -> None:
    theirs, mine = _note("later", T2), _note("earlier", T1)
    incoming, local = _changes(theirs, _copy(theirs, False)), _changes(mine, _copy(mine, True))
    resolve(incoming, local)
    assert (len(incoming.items), len(local.items)) == (2, 0)

    incoming, local = _changes(mine, _copy(mine, False)), _changes(theirs, _copy(theirs, True))
    resolve(incoming, local)
    assert (len(incoming.items), len(local.items)) == (0, 2)


def test_a_memory_or_link_changed_on_both_sides_keeps_this_machines_version() -> None:
    link = Link(from_id="n1", to_id="n2", relation=Relation.SUPPORTS, project=REPO, strength=0.5)
    message = Memory(id="m1", kind=MemoryKind.MESSAGE, text="hi", project=REPO)
    incoming = _changes(link, message)
    local = _changes(link.model_copy(update={"strength": 0.9}), message.model_copy(update={"pinned": True}))
    resolve(incoming, local)
    assert (len(incoming.items), len(local.items)) == (0, 2)


def test_a_forget_wins_over_a_change_on_either_side() -> None:
    note = _note("x", T2)
    incoming, local = _changes(forgotten=(note,)), _changes(note)
    resolve(incoming, local)
    assert not local
    assert incoming.forgotten == {key_of(note)}

    incoming, local = _changes(note), _changes(forgotten=(note,))
    resolve(incoming, local)
    assert not incoming
    assert local.forgotten == {key_of(note)}

    merged = _changes(forgotten=(note,))
    merge(merged, _changes(note))  # a later file of another machine that had not seen the forget
    assert not merged.items


async def test_two_machines_converge_on_the_later_edit_of_a_note(tmp_path: Path) -> None:
    remote = tmp_path / "remote"
    remote.mkdir()
    scope = Scope(project="notes-everywhere")
    settings = {n: make_settings(tmp_path / n).model_copy(update={"project": scope.project}) for n in "ab"}

    async def run(name: str) -> str:
        async with open_app(settings[name], FakeEmbedder()) as app:
            return (await sync(app.service, str(remote), data_dir=settings[name].data_dir, cwd=None)).line()

    async with open_app(settings["a"], FakeEmbedder()) as app:
        made = await app.service.create_note(scope, NoteDraft("Backups run at two.", NoteType.FACT))
    await run("a")
    await run("b")
    for name, content in (("a", "Backups run at three."), ("b", "Backups run at four.")):
        async with open_app(settings[name], FakeEmbedder()) as app:  # b edits last: its modified is later
            await app.service.update_note(scope, made.id, NoteUpdate(content=content))
    await run("b")
    # a's own edit is older: it takes b's and sends nothing.
    assert "sent 0 memories, 0 notes, 0 links, 0 forgets; received 1 change files: 1 memories, 1 notes" in (
        await run("a")
    )
    second = await run("b")
    assert "sent 0 memories, 0 notes, 0 links, 0 forgets" in second
    for name in "ab":
        async with open_app(settings[name], FakeEmbedder()) as app:
            stored = await app.service.stores.graph.get_notes(scope, [made.id])
            copy = await app.service.stores.vectors.get(scope, [made.id])
        assert [n.content for n in stored] == [c.text for c in copy] == ["Backups run at four."]
    assert sorted(p.name for p in (remote / "changes").iterdir()) == sorted(
        (settings[n].data_dir / "sync" / "machine").read_text().strip() for n in "ab"
    )


async def test_two_machines_pushing_at_once_both_get_their_change_file_in(tmp_path: Path) -> None:
    bare = tmp_path / "memory.git"
    await anyio.run_process(["git", "init", "--quiet", "--bare", str(bare)])
    laptop, desktop = GitRemote(str(bare), tmp_path / "a"), GitRemote(str(bare), tmp_path / "b")
    await laptop.pull()
    await desktop.pull()
    await laptop.publish("laptop", 1, "one\n")
    await desktop.publish("desktop", 1, "two\n")  # its clone is behind: rejected once, rebased, pushed

    seen = [(f.machine, f.seq, f.path.read_text()) for f in change_files(await laptop.pull())]
    assert seen == [("desktop", 1, "two\n"), ("laptop", 1, "one\n")]
