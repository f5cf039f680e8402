from datetime import UTC, datetime, timedelta

from hybrid_memory.models import Link, Note, NoteType, Relation
from hybrid_memory.service.lifecycle.successors import successor

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def note(nid: str, days: int) -> Note:
    return Note(id=nid, project="p", content=nid, type=NoteType.FACT, created=T0 + timedelta(days=days))


def link(a: str, b: str, relation: Relation) -> Link:
    return Link(from_id=a, to_id=b, relation=relation, project="p")


def test_the_note_that_supersedes_is_the_successor() -> None:
    links = [link("new", "old", Relation.SUPERSEDES), link("old", "other", Relation.SUPERSEDES)]
    assert successor("old", T0, links, [note("new", 1), note("other", 2)]) == "new"


def test_of_two_contradicting_notes_the_newer_one_is_the_successor_either_way_round() -> None:
    notes = [note("newer", 3), note("older", -3)]
    links = [link("old", "newer", Relation.CONTRADICTS), link("older", "old", Relation.CONTRADICTS)]
    assert successor("old", T0, links, notes) == "newer"


def test_a_note_only_related_has_no_successor() -> None:
    assert successor("old", T0, [link("x", "old", Relation.RELATES_TO)], [note("x", 1)]) is None
