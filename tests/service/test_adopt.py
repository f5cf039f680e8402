"""Moving a project's memory: a move cut short loses nothing, and running it again finishes it."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from hybrid_memory.models import MemoryFilter, NoteType, Scope
from hybrid_memory.service import NoteDraft, ThreadDraft
from hybrid_memory.service.adopt import move_project

from .conftest import Harness, messages

OLD, NEW = Scope(project="api"), Scope(project="/home/ana/alice/api")


async def _texts(harness: Harness, scope: Scope) -> list[str]:
    found, _ = await harness.vectors.scroll(MemoryFilter(scope=scope), 100)
    return sorted(m.text for m in found)


async def test_a_move_cut_short_leaves_copies_in_both_and_the_next_run_finishes_it(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    await harness.service.remember_thread(
        OLD, ThreadDraft("s1", messages("Pool is 20.", "Noted.", "Deploy Thu."))
    )
    await harness.service.create_note(OLD, NoteDraft(content="Pool size is 20.", type=NoteType.DECISION))
    everything = await _texts(harness, OLD)
    stores = harness.service.stores

    async def crash(scope: Scope, ids: Sequence[str]) -> int:
        raise OSError("the process was killed here")

    with monkeypatch.context() as patched:
        patched.setattr(stores.vectors, "delete", crash)
        with pytest.raises(OSError, match="killed"):
            await move_project(stores, OLD, NEW.project)
    assert await _texts(harness, NEW) == everything  # written under the new name before anything is deleted
    assert set(await _texts(harness, OLD)) | set(await _texts(harness, NEW)) == set(everything)

    moved = await move_project(stores, OLD, NEW.project)
    again = await move_project(stores, OLD, NEW.project)

    assert (moved.memories, moved.notes) == (3, 1)  # the messages still under the old name, and the note
    assert (again.memories, again.notes) == (0, 0)
    assert await _texts(harness, OLD) == []
    assert await _texts(harness, NEW) == everything
    remembered = await harness.service.remember_thread(
        NEW, ThreadDraft("s1", messages("Pool is 20.", "Noted.", "Deploy Thu."))
    )
    assert (remembered.stored, remembered.unchanged) == (0, 3)


async def test_moving_a_thread_moves_its_messages_and_leaves_its_notes_whole(harness: Harness) -> None:
    await harness.service.remember_thread(OLD, ThreadDraft("bob-1", messages("Bob's API speaks XML.")))
    await harness.service.remember_thread(OLD, ThreadDraft("alice-1", messages("Alice's API speaks JSON.")))
    note = await harness.service.create_note(
        OLD, NoteDraft(content="XML everywhere.", type=NoteType.DECISION, thread_id="bob-1")
    )

    moved = await move_project(harness.service.stores, OLD, NEW.project, threads=["bob-1"])

    assert (moved.memories, moved.notes) == (1, 0)
    assert await _texts(harness, NEW) == ["Bob's API speaks XML."]
    assert await _texts(harness, OLD) == ["Alice's API speaks JSON.", "XML everywhere."]
    assert [n.id for n in await harness.graph.get_notes(OLD, [note.id])] == [note.id]
