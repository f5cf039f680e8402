"""Notes and links: create, near-duplicates, update, closing links, neighbourhoods, repair."""

from __future__ import annotations

import pytest

from hybrid_memory.errors import InvalidInputError, NotFoundError
from hybrid_memory.models import Direction, MemoryKind, NoteType, Relation, Walk
from hybrid_memory.service import NoteDraft, NoteUpdate, RecallOptions

from .conftest import SCOPE, Harness


async def test_a_note_lives_in_the_graph_and_as_a_searchable_copy(harness: Harness) -> None:
    note = await harness.service.create_note(
        SCOPE,
        NoteDraft(
            content="The ledger runs on Postgres.", type=NoteType.DECISION, tags=["db", " db ", "ledger"]
        ),
    )

    [stored] = await harness.graph.get_notes(SCOPE, [note.id])
    [copy] = await harness.vectors.get(SCOPE, [note.id])
    assert (stored.content, stored.type, stored.tags) == (
        "The ledger runs on Postgres.",
        NoteType.DECISION,
        ["db", "ledger"],
    )
    assert (copy.kind, copy.text, copy.note_type, copy.tags) == (
        MemoryKind.NOTE,
        stored.content,
        stored.type,
        stored.tags,
    )
    assert (note.duplicate, stored.valid_from) == (False, stored.created)


async def test_the_same_note_again_returns_the_existing_one(harness: Harness) -> None:
    first = await harness.service.create_note(
        SCOPE, NoteDraft(content="Tabs, not spaces.", type=NoteType.PREFERENCE)
    )

    again = await harness.service.create_note(
        SCOPE, NoteDraft(content="Tabs, not spaces.", type=NoteType.PREFERENCE)
    )

    assert (again.id, again.duplicate, again.similarity) == (first.id, True, 1.0)
    assert await harness.count(kinds=[MemoryKind.NOTE]) == 1


async def test_force_stores_a_duplicate_anyway(harness: Harness) -> None:
    first = await harness.service.create_note(
        SCOPE, NoteDraft(content="Tabs, not spaces.", type=NoteType.PREFERENCE)
    )

    forced = await harness.service.create_note(
        SCOPE, NoteDraft(content="Tabs, not spaces.", type=NoteType.PREFERENCE, force=True)
    )

    assert forced.id != first.id
    assert not forced.duplicate
    assert await harness.count(kinds=[MemoryKind.NOTE]) == 2


async def test_a_closed_note_is_no_duplicate_of_a_new_one(harness: Harness) -> None:
    old = await harness.service.create_note(
        SCOPE, NoteDraft(content="Deploys happen on Friday.", type=NoteType.FACT)
    )
    newer = await harness.service.create_note(
        SCOPE, NoteDraft(content="Deploys happen on Monday.", type=NoteType.FACT)
    )
    await harness.service.create_link(SCOPE, from_id=newer.id, to_id=old.id, relation=Relation.SUPERSEDES)

    again = await harness.service.create_note(
        SCOPE, NoteDraft(content="Deploys happen on Friday.", type=NoteType.FACT)
    )

    assert not again.duplicate
    assert again.id not in (old.id, newer.id)


async def test_update_reindexes_the_new_text_and_keeps_the_pin(harness: Harness) -> None:
    note = await harness.service.create_note(
        SCOPE, NoteDraft(content="The cache is Redis.", type=NoteType.FACT)
    )
    await harness.service.pin(SCOPE, note.id, True)

    updated = await harness.service.update_note(
        SCOPE, note.id, NoteUpdate(content="The cache is Memcached.", tags=["cache"])
    )

    [copy] = await harness.vectors.get(SCOPE, [note.id])
    assert (updated.content, updated.tags, updated.pinned) == ("The cache is Memcached.", ["cache"], True)
    assert (copy.text, copy.pinned) == ("The cache is Memcached.", True)
    found = await harness.service.recall(SCOPE, "Memcached", RecallOptions())
    assert [hit.id for hit in found.results] == [note.id]
    # The old words are gone from the keyword and full-text indexes (dense always finds something).
    [stale] = (await harness.service.recall(SCOPE, "Redis", RecallOptions())).results
    assert stale.channels == ["dense"]


async def test_update_needs_a_change(harness: Harness) -> None:
    note = await harness.service.create_note(SCOPE, NoteDraft(content="Unchanged.", type=NoteType.FACT))

    with pytest.raises(InvalidInputError) as refused:
        await harness.service.update_note(SCOPE, note.id, NoteUpdate())

    assert str(refused.value) == "Nothing to update: pass at least one of content, type, tags, importance."


async def test_supersedes_closes_the_target_in_both_stores(harness: Harness) -> None:
    old = await harness.service.create_note(
        SCOPE, NoteDraft(content="Deploys on Friday.", type=NoteType.DECISION)
    )
    new = await harness.service.create_note(
        SCOPE, NoteDraft(content="Deploys on Monday.", type=NoteType.DECISION)
    )

    link = await harness.service.create_link(
        SCOPE, from_id=new.id, to_id=old.id, relation=Relation.SUPERSEDES
    )

    [closed] = await harness.graph.get_notes(SCOPE, [old.id])
    [copy] = await harness.vectors.get(SCOPE, [old.id])
    [kept] = await harness.graph.get_notes(SCOPE, [new.id])
    assert closed.valid_to == link.created
    assert copy.valid_to == link.created
    assert kept.valid_to is None


async def test_contradicts_closes_the_older_note_whichever_way_it_points(harness: Harness) -> None:
    older = await harness.service.create_note(
        SCOPE, NoteDraft(content="The API is public.", type=NoteType.FACT)
    )
    newer = await harness.service.create_note(
        SCOPE, NoteDraft(content="The API is internal only.", type=NoteType.FACT)
    )

    await harness.service.create_link(SCOPE, from_id=older.id, to_id=newer.id, relation=Relation.CONTRADICTS)

    notes = {n.id: n for n in await harness.graph.get_notes(SCOPE, [older.id, newer.id])}
    assert notes[older.id].valid_to is not None
    assert notes[newer.id].valid_to is None


async def test_other_relations_close_nothing(harness: Harness) -> None:
    a = await harness.service.create_note(
        SCOPE, NoteDraft(content="Postgres stores the ledger.", type=NoteType.FACT)
    )
    b = await harness.service.create_note(
        SCOPE, NoteDraft(content="Backups run nightly.", type=NoteType.FACT)
    )

    link = await harness.service.create_link(
        SCOPE, from_id=b.id, to_id=a.id, relation=Relation.SUPPORTS, strength=0.5
    )

    assert (link.relation, link.strength) == (Relation.SUPPORTS, 0.5)
    assert all(n.valid_to is None for n in await harness.graph.get_notes(SCOPE, [a.id, b.id]))


@pytest.mark.parametrize(
    ("from_id", "to_id", "error", "message"),
    [
        (
            "a",
            "a",
            InvalidInputError,
            "from_id and to_id are the same note; a link joins two different notes.",
        ),
        (
            "a",
            "ghost",
            NotFoundError,
            "No note 'ghost' in this project. create_note returns note ids; "
            "recall_memory(kinds=['note']) finds existing ones.",
        ),
    ],
)
async def test_bad_links_are_refused(
    harness: Harness, from_id: str, to_id: str, error: type[Exception], message: str
) -> None:
    a = await harness.service.create_note(SCOPE, NoteDraft(content="A note.", type=NoteType.FACT))
    ids = {"a": a.id, "ghost": "ghost"}

    with pytest.raises(error) as refused:
        await harness.service.create_link(
            SCOPE, from_id=ids[from_id], to_id=ids[to_id], relation=Relation.RELATES_TO
        )

    assert str(refused.value) == message


async def test_linked_notes_starts_with_the_note_and_walks_its_links(harness: Harness) -> None:
    a, b, c = [
        await harness.service.create_note(SCOPE, NoteDraft(content=text, type=NoteType.CONCEPT))
        for text in ("Graphs have nodes.", "Nodes have edges.", "Edges have types.")
    ]
    await harness.service.create_link(SCOPE, from_id=a.id, to_id=b.id, relation=Relation.EXTENDS)
    await harness.service.create_link(SCOPE, from_id=b.id, to_id=c.id, relation=Relation.EXTENDS)

    one = await harness.service.linked_notes(
        SCOPE, Walk(note_id=a.id, depth=1, relations=None, direction=Direction.OUT, limit=10)
    )
    two = await harness.service.linked_notes(
        SCOPE, Walk(note_id=a.id, depth=2, relations=None, direction=Direction.OUT, limit=10)
    )
    backwards = await harness.service.linked_notes(
        SCOPE, Walk(note_id=a.id, depth=2, relations=None, direction=Direction.IN, limit=10)
    )

    assert [n.id for n in one.notes] == [a.id, b.id]
    assert [n.id for n in two.notes] == [a.id, b.id, c.id]
    assert [n.id for n in backwards.notes] == [a.id]


async def test_repair_reindexes_a_note_whose_copy_is_missing(harness: Harness) -> None:
    note = await harness.service.create_note(SCOPE, NoteDraft(content="Half written.", type=NoteType.FACT))
    await harness.vectors.delete(SCOPE, [note.id])

    assert await harness.service.repair(SCOPE) == 1
    assert await harness.service.repair(SCOPE) == 0
    assert [m.text for m in await harness.vectors.get(SCOPE, [note.id])] == ["Half written."]
