"""The GraphStore contract: every graph backend in ``graph_backends.py`` must pass it.

Only the protocol is used here, never a backend's internals, and scores are compared
by order only, so the same tests hold for SQLite (FTS5/BM25) and Neo4j (Lucene).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import pytest

from hybrid_memory.backends.base import GraphStore
from hybrid_memory.errors import ConflictError, NotFoundError
from hybrid_memory.models import Direction, Link, Note, NoteFilter, NoteType, Relation, Scope, Walk

from .graph_backends import GRAPH_BACKENDS, GraphBackend, GraphStoreOpener

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
ALPHA = Scope(project="alpha", user="ann")
OTHER_SCOPES = [
    pytest.param(Scope(project="beta", user="ann"), id="other-project"),
    pytest.param(Scope(project="alpha", user="bob"), id="other-user"),
]
OUT, IN, BOTH = Direction.OUT, Direction.IN, Direction.BOTH
RELATES_TO, SUPPORTS, EXTENDS = Relation.RELATES_TO, Relation.SUPPORTS, Relation.EXTENDS
PART_OF, ANSWERS = Relation.PART_OF, Relation.ANSWERS


def at(hours: float) -> datetime:
    return T0 + timedelta(hours=hours)


def make_note(
    note_id: str,
    content: str = "some content",
    *,
    scope: Scope = ALPHA,
    type: NoteType = NoteType.FACT,
    tags: Sequence[str] = (),
    thread_id: str | None = None,
    created: datetime = T0,
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
) -> Note:
    return Note(
        id=note_id,
        project=scope.project,
        user=scope.user,
        content=content,
        type=type,
        tags=list(tags),
        thread_id=thread_id,
        created=created,
        modified=created,
        valid_from=valid_from,
        valid_to=valid_to,
    )


def make_link(
    from_id: str,
    to_id: str,
    relation: Relation = RELATES_TO,
    *,
    scope: Scope = ALPHA,
    strength: float = 1.0,
    created: datetime = T0,
    valid_from: datetime | None = None,
    valid_to: datetime | None = None,
) -> Link:
    return Link(
        from_id=from_id,
        to_id=to_id,
        relation=relation,
        strength=strength,
        project=scope.project,
        user=scope.user,
        created=created,
        valid_from=valid_from,
        valid_to=valid_to,
    )


def ids(notes: Iterable[Note]) -> list[str]:
    return [note.id for note in notes]


def triples(links: Iterable[Link]) -> set[tuple[str, str, Relation]]:
    return {(link.from_id, link.to_id, link.relation) for link in links}


def not_found(note_id: str) -> str:
    return f"No note '{note_id}' in this project. create_note returns note ids; recall_memory finds them."


async def add(store: GraphStore, *items: Note | Link) -> None:
    for item in items:
        if isinstance(item, Note):
            await store.upsert_note(item)
        else:
            await store.upsert_link(item)


@pytest.fixture(params=GRAPH_BACKENDS)
def open_graph_store(request: pytest.FixtureRequest, tmp_path: Path) -> GraphStoreOpener:
    backend: GraphBackend = request.param
    return backend(request, tmp_path)


@pytest.fixture
async def graph_store(open_graph_store: GraphStoreOpener) -> AsyncIterator[GraphStore]:
    async with open_graph_store() as store:
        yield store


@pytest.fixture
async def graph(graph_store: GraphStore) -> GraphStore:
    """a -> b -> c -> a is a cycle, c -> d leads out of it, e -> a leads in, f stands alone.

    Notes are created an hour apart in letter order, so "oldest first" is letter order.
    """
    for hour, note_id in enumerate("abcdef"):
        await graph_store.upsert_note(make_note(note_id, f"note {note_id}", created=at(hour)))
    await add(
        graph_store,
        make_link("a", "b", RELATES_TO),
        make_link("b", "c", SUPPORTS),
        make_link("c", "a", EXTENDS),
        make_link("c", "d", PART_OF),
        make_link("e", "a", ANSWERS),
    )
    return graph_store


# -- notes ---------------------------------------------------------------------------------------


async def test_note_round_trips_every_field_exactly(graph_store: GraphStore) -> None:
    note = Note(
        id="n-ü-1",
        project="alpha",
        user="ann",
        content="Zürich ☕ — 日本語のメモ 🧠\nquotes \" ' and a \\ backslash",
        type=NoteType.INSIGHT,
        tags=["ünïcode", "two words", 'quo"te', "日本"],
        importance=0.75,
        thread_id="thread-1",
        created=datetime(2024, 2, 29, 23, 59, 59, 123456, tzinfo=UTC),
        modified=datetime(2024, 3, 1, 0, 0, 0, 1, tzinfo=UTC),
        valid_from=datetime(2024, 1, 1, tzinfo=UTC),
        valid_to=datetime(2030, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    )
    await graph_store.upsert_note(note)

    [stored] = await graph_store.get_notes(ALPHA, [note.id])

    assert stored == note
    for value in (stored.created, stored.modified, stored.valid_from, stored.valid_to):
        assert value is not None
        assert value.utcoffset() == timedelta(0)


async def test_note_with_defaults_round_trips(graph_store: GraphStore) -> None:
    note = Note(id="plain", project="alpha", user="ann", content="plain", type=NoteType.FACT, created=T0)

    await graph_store.upsert_note(note)

    assert await graph_store.get_notes(ALPHA, ["plain"]) == [note]


async def test_note_with_100k_characters_round_trips(graph_store: GraphStore) -> None:
    content = ("lorem ipsum dolor sit amet ü " * 3449)[:100_000]
    note = make_note("long", content)

    await graph_store.upsert_note(note)

    [stored] = await graph_store.get_notes(ALPHA, ["long"])
    assert len(stored.content) == 100_000
    assert stored == note


async def test_datetimes_in_other_time_zones_come_back_as_the_same_instant_in_utc(
    graph_store: GraphStore,
) -> None:
    plus_two = timezone(timedelta(hours=2))
    note = make_note("tz", created=datetime(2024, 6, 1, 14, 30, 15, 250000, tzinfo=plus_two))

    await graph_store.upsert_note(note)

    [stored] = await graph_store.get_notes(ALPHA, ["tz"])
    assert stored.created == datetime(2024, 6, 1, 12, 30, 15, 250000, tzinfo=UTC)
    assert stored.created.utcoffset() == timedelta(0)


async def test_upsert_replaces_every_field_of_an_existing_note(graph_store: GraphStore) -> None:
    await graph_store.upsert_note(make_note("n1", "old words", tags=["old"], thread_id="t1"))
    replacement = Note(
        id="n1",
        project="alpha",
        user="ann",
        content="new words",
        type=NoteType.DECISION,
        tags=["new"],
        importance=0.5,
        thread_id="t2",
        created=at(1),
        modified=at(2),
        valid_from=at(1),
        valid_to=at(3),
    )

    await graph_store.upsert_note(replacement)

    assert await graph_store.get_notes(ALPHA, ["n1"]) == [replacement]
    assert await graph_store.count_notes(NoteFilter(scope=ALPHA)) == 1
    assert await graph_store.search_notes("old", NoteFilter(scope=ALPHA), 10) == []
    assert ids(hit.note for hit in await graph_store.search_notes("new", NoteFilter(scope=ALPHA), 10)) == [
        "n1"
    ]


async def test_upsert_of_a_note_keeps_its_links(graph: GraphStore) -> None:
    await graph.upsert_note(make_note("b", "b rewritten", created=at(1)))

    found = await graph.neighbourhood(ALPHA, Walk(note_id="a", depth=1, relations=None, direction=OUT))

    assert triples(found.links) == {("a", "b", RELATES_TO)}


async def test_get_notes_returns_only_the_known_ids(graph_store: GraphStore) -> None:
    await add(graph_store, make_note("n1"), make_note("n2"))

    found = await graph_store.get_notes(ALPHA, ["n2", "missing", "n1", "n1"])

    assert sorted(ids(found)) == ["n1", "n2"]
    assert await graph_store.get_notes(ALPHA, []) == []


async def test_delete_note_reports_whether_it_existed(graph_store: GraphStore) -> None:
    await graph_store.upsert_note(make_note("n1"))

    assert await graph_store.delete_note(ALPHA, "n1") is True
    assert await graph_store.delete_note(ALPHA, "n1") is False
    assert await graph_store.get_notes(ALPHA, ["n1"]) == []
    assert await graph_store.delete_note(ALPHA, "never-existed") is False


async def test_delete_note_removes_every_link_touching_it(graph: GraphStore) -> None:
    assert await graph.delete_note(ALPHA, "c") is True

    around_a = await graph.neighbourhood(ALPHA, Walk(note_id="a", depth=3, relations=None, direction=BOTH))
    assert ids(around_a.notes) == ["b", "e"]
    assert triples(around_a.links) == {("a", "b", RELATES_TO), ("e", "a", ANSWERS)}

    # A note re-created under the same id starts without the old links.
    await graph.upsert_note(make_note("c", created=at(2)))
    around_c = await graph.neighbourhood(ALPHA, Walk(note_id="c", depth=3, relations=None, direction=BOTH))
    assert around_c.notes == []
    assert around_c.links == []


async def test_deleted_note_is_no_longer_found_by_search(graph_store: GraphStore) -> None:
    await graph_store.upsert_note(make_note("n1", "ephemeral walrus"))

    await graph_store.delete_note(ALPHA, "n1")

    assert await graph_store.search_notes("walrus", NoteFilter(scope=ALPHA), 10) == []


async def test_concurrent_upserts_are_all_stored(graph_store: GraphStore) -> None:
    async with anyio.create_task_group() as tg:
        for i in range(40):
            tg.start_soon(graph_store.upsert_note, make_note(f"n{i:02}", f"word{i}", created=at(i)))

    assert await graph_store.count_notes(NoteFilter(scope=ALPHA)) == 40


async def test_reopening_keeps_notes_and_links(open_graph_store: GraphStoreOpener) -> None:
    note_a, note_b = make_note("a", "persistent aardvark"), make_note("b", created=at(1))
    link = make_link("a", "b", SUPPORTS, strength=0.4)
    async with open_graph_store() as store:
        await add(store, note_a, note_b, link)

    async with open_graph_store() as store:
        assert sorted(ids(await store.get_notes(ALPHA, ["a", "b"]))) == ["a", "b"]
        found = await store.neighbourhood(ALPHA, Walk(note_id="a", depth=1, relations=None, direction=OUT))
        assert found.notes == [note_b]
        assert found.links == [link]
        hits = await store.search_notes("aardvark", NoteFilter(scope=ALPHA), 10)
        assert [hit.note for hit in hits] == [note_a]


# -- scope isolation -----------------------------------------------------------------------------


@pytest.mark.parametrize("other", OTHER_SCOPES)
async def test_other_scope_reads_nothing(graph: GraphStore, other: Scope) -> None:
    flt = NoteFilter(scope=other)

    assert await graph.get_notes(other, list("abcdef")) == []
    assert await graph.list_notes(flt, 100) == []
    assert await graph.count_notes(flt) == 0
    assert await graph.search_notes("note", flt, 10) == []
    found = await graph.neighbourhood(other, Walk(note_id="a", depth=3, relations=None, direction=BOTH))
    assert found.notes == []
    assert found.links == []


@pytest.mark.parametrize("other", OTHER_SCOPES)
async def test_other_scope_cannot_delete_notes_or_links(graph: GraphStore, other: Scope) -> None:
    assert await graph.delete_note(other, "a") is False
    assert await graph.delete_link(other, "a", "b", RELATES_TO) is False

    assert ids(await graph.get_notes(ALPHA, ["a"])) == ["a"]
    found = await graph.neighbourhood(ALPHA, Walk(note_id="a", depth=1, relations=None, direction=OUT))
    assert triples(found.links) == {("a", "b", RELATES_TO)}


@pytest.mark.parametrize("other", OTHER_SCOPES)
async def test_other_scope_cannot_link_notes_it_does_not_own(graph: GraphStore, other: Scope) -> None:
    with pytest.raises(NotFoundError) as excinfo:
        await graph.upsert_link(make_link("a", "d", scope=other))

    assert str(excinfo.value) == not_found("a")
    found = await graph.neighbourhood(ALPHA, Walk(note_id="a", depth=1, relations=None, direction=OUT))
    assert ids(found.notes) == ["b"]


@pytest.mark.parametrize("other", OTHER_SCOPES)
async def test_other_scope_cannot_overwrite_a_note_id(graph_store: GraphStore, other: Scope) -> None:
    original = make_note("shared-id", "the original")
    await graph_store.upsert_note(original)

    with pytest.raises(ConflictError) as excinfo:
        await graph_store.upsert_note(make_note("shared-id", "an impostor", scope=other))

    assert str(excinfo.value) == (
        "Note id 'shared-id' is already used in another project or by another user; choose a different id."
    )
    assert await graph_store.get_notes(ALPHA, ["shared-id"]) == [original]
    assert await graph_store.get_notes(other, ["shared-id"]) == []


@pytest.mark.parametrize("other", OTHER_SCOPES)
async def test_each_scope_sees_only_its_own_notes(graph_store: GraphStore, other: Scope) -> None:
    await add(
        graph_store,
        make_note("mine-1", "shared topic mine", created=at(1)),
        make_note("mine-2", "shared topic mine", created=at(2)),
        make_note("theirs", "shared topic theirs", scope=other),
    )

    for scope, expected in ((ALPHA, ["mine-2", "mine-1"]), (other, ["theirs"])):
        flt = NoteFilter(scope=scope)
        assert ids(await graph_store.list_notes(flt, 10)) == expected
        assert await graph_store.count_notes(flt) == len(expected)
        hits = await graph_store.search_notes("shared topic", flt, 10)
        assert sorted(ids(hit.note for hit in hits)) == sorted(expected)


# -- links ---------------------------------------------------------------------------------------


async def test_upsert_link_returns_the_stored_link(graph_store: GraphStore) -> None:
    await add(graph_store, make_note("a"), make_note("b"))
    link = make_link("a", "b", SUPPORTS, strength=0.25, created=at(1), valid_from=at(1), valid_to=at(9))

    assert await graph_store.upsert_link(link) == link
    found = await graph_store.neighbourhood(ALPHA, Walk(note_id="a", depth=1, relations=None, direction=OUT))
    assert found.links == [link]


async def test_upsert_link_again_updates_it_and_keeps_created(graph_store: GraphStore) -> None:
    await add(graph_store, make_note("a"), make_note("b"))
    await graph_store.upsert_link(make_link("a", "b", SUPPORTS, strength=0.9, created=at(1)))

    stored = await graph_store.upsert_link(
        make_link("a", "b", SUPPORTS, strength=0.3, created=at(5), valid_from=at(5), valid_to=at(9))
    )

    expected = make_link("a", "b", SUPPORTS, strength=0.3, created=at(1), valid_from=at(5), valid_to=at(9))
    assert stored == expected
    found = await graph_store.neighbourhood(ALPHA, Walk(note_id="a", depth=1, relations=None, direction=OUT))
    assert found.links == [expected]


async def test_links_differing_only_in_relation_coexist(graph_store: GraphStore) -> None:
    await add(graph_store, make_note("a"), make_note("b"))

    await add(graph_store, make_link("a", "b", SUPPORTS), make_link("a", "b", EXTENDS))

    found = await graph_store.neighbourhood(ALPHA, Walk(note_id="a", depth=1, relations=None, direction=OUT))
    assert ids(found.notes) == ["b"]
    assert triples(found.links) == {("a", "b", SUPPORTS), ("a", "b", EXTENDS)}


@pytest.mark.parametrize(("from_id", "to_id", "missing"), [("ghost", "a", "ghost"), ("a", "ghost", "ghost")])
async def test_link_to_a_missing_note_is_rejected_and_not_stored(
    graph_store: GraphStore, from_id: str, to_id: str, missing: str
) -> None:
    await graph_store.upsert_note(make_note("a"))

    with pytest.raises(NotFoundError) as excinfo:
        await graph_store.upsert_link(make_link(from_id, to_id))

    assert str(excinfo.value) == not_found(missing)
    found = await graph_store.neighbourhood(ALPHA, Walk(note_id="a", depth=1, relations=None, direction=BOTH))
    assert found.links == []
    # Creating the missing note later must not reveal a dangling link stored earlier.
    await graph_store.upsert_note(make_note("ghost"))
    found = await graph_store.neighbourhood(ALPHA, Walk(note_id="a", depth=1, relations=None, direction=BOTH))
    assert found.links == []


async def test_delete_link_removes_only_that_link(graph_store: GraphStore) -> None:
    await add(graph_store, make_note("a"), make_note("b"))
    await add(graph_store, make_link("a", "b", SUPPORTS), make_link("a", "b", EXTENDS))

    assert await graph_store.delete_link(ALPHA, "a", "b", SUPPORTS) is True
    assert await graph_store.delete_link(ALPHA, "a", "b", SUPPORTS) is False
    assert await graph_store.delete_link(ALPHA, "b", "a", EXTENDS) is False

    found = await graph_store.neighbourhood(ALPHA, Walk(note_id="a", depth=1, relations=None, direction=OUT))
    assert triples(found.links) == {("a", "b", EXTENDS)}
    assert sorted(ids(await graph_store.get_notes(ALPHA, ["a", "b"]))) == ["a", "b"]


# -- neighbourhood -------------------------------------------------------------------------------

AB, BC, CA = ("a", "b", RELATES_TO), ("b", "c", SUPPORTS), ("c", "a", EXTENDS)
CD, EA = ("c", "d", PART_OF), ("e", "a", ANSWERS)


@pytest.mark.parametrize(
    ("direction", "depth", "relations", "expected_notes", "expected_links"),
    [
        pytest.param(OUT, 1, None, ["b"], {AB}, id="out-1"),
        pytest.param(OUT, 2, None, ["b", "c"], {AB, BC, CA}, id="out-2"),
        pytest.param(OUT, 3, None, ["b", "c", "d"], {AB, BC, CA, CD}, id="out-3"),
        pytest.param(OUT, 10, None, ["b", "c", "d"], {AB, BC, CA, CD}, id="out-10-cycle-terminates"),
        pytest.param(IN, 1, None, ["c", "e"], {CA, EA}, id="in-1"),
        pytest.param(IN, 2, None, ["c", "e", "b"], {AB, BC, CA, EA}, id="in-2"),
        pytest.param(IN, 3, None, ["c", "e", "b"], {AB, BC, CA, EA}, id="in-3"),
        pytest.param(BOTH, 1, None, ["b", "c", "e"], {AB, BC, CA, EA}, id="both-1"),
        pytest.param(BOTH, 2, None, ["b", "c", "e", "d"], {AB, BC, CA, CD, EA}, id="both-2"),
        pytest.param(OUT, 3, [RELATES_TO, SUPPORTS], ["b", "c"], {AB, BC}, id="out-3-relations"),
        pytest.param(BOTH, 3, [ANSWERS], ["e"], {EA}, id="both-3-one-relation"),
        pytest.param(IN, 3, [RELATES_TO], [], set(), id="in-3-no-matching-relation"),
    ],
)
async def test_neighbourhood_walks_depth_direction_and_relations(
    graph: GraphStore,
    direction: Direction,
    depth: int,
    relations: list[Relation] | None,
    expected_notes: list[str],
    expected_links: set[tuple[str, str, Relation]],
) -> None:
    found = await graph.neighbourhood(
        ALPHA, Walk(note_id="a", depth=depth, relations=relations, direction=direction)
    )

    assert ids(found.notes) == expected_notes
    assert triples(found.links) == expected_links


async def test_neighbourhood_returns_full_notes_and_links(graph: GraphStore) -> None:
    found = await graph.neighbourhood(ALPHA, Walk(note_id="b", depth=1, relations=None, direction=OUT))

    assert found.notes == [make_note("c", "note c", created=at(2))]
    assert found.links == [make_link("b", "c", SUPPORTS)]


@pytest.mark.parametrize(
    ("limit", "expected_notes", "expected_links"),
    [(1, ["b"], {AB}), (2, ["b", "c"], {AB, BC, CA}), (4, ["b", "c", "e", "d"], {AB, BC, CA, CD, EA})],
)
async def test_neighbourhood_limit_keeps_the_nearest_then_oldest(
    graph: GraphStore, limit: int, expected_notes: list[str], expected_links: set[Any]
) -> None:
    found = await graph.neighbourhood(
        ALPHA, Walk(note_id="a", depth=2, relations=None, direction=BOTH, limit=limit)
    )

    assert ids(found.notes) == expected_notes
    assert triples(found.links) == expected_links


@pytest.mark.parametrize(
    ("valid_at", "expected_notes"),
    [
        pytest.param(at(9), [], id="before-valid-from"),
        pytest.param(at(10), ["b", "c", "d"], id="at-valid-from"),
        pytest.param(at(19), ["b", "c", "d"], id="inside"),
        pytest.param(at(20), [], id="at-valid-to"),
        pytest.param(None, ["b", "c", "d"], id="no-filter"),
    ],
)
async def test_neighbourhood_walks_only_links_valid_at_the_instant(
    graph: GraphStore, valid_at: datetime | None, expected_notes: list[str]
) -> None:
    await graph.upsert_link(make_link("a", "b", RELATES_TO, valid_from=at(10), valid_to=at(20)))

    found = await graph.neighbourhood(
        ALPHA, Walk(note_id="a", depth=3, relations=None, direction=OUT, valid_at=valid_at)
    )

    assert ids(found.notes) == expected_notes


async def test_neighbourhood_skips_and_does_not_walk_through_invalid_notes(graph: GraphStore) -> None:
    await graph.upsert_note(make_note("c", "note c", created=at(2), valid_to=at(10)))

    later = await graph.neighbourhood(
        ALPHA, Walk(note_id="a", depth=3, relations=None, direction=BOTH, valid_at=at(20))
    )
    earlier = await graph.neighbourhood(
        ALPHA, Walk(note_id="a", depth=3, relations=None, direction=BOTH, valid_at=at(5))
    )

    assert ids(later.notes) == ["b", "e"]
    assert triples(later.links) == {AB, EA}
    assert ids(earlier.notes) == ["b", "c", "e", "d"]


@pytest.mark.parametrize("start", ["f", "no-such-note"])
async def test_neighbourhood_of_an_unlinked_or_unknown_note_is_empty(graph: GraphStore, start: str) -> None:
    found = await graph.neighbourhood(ALPHA, Walk(note_id=start, depth=3, relations=None, direction=BOTH))

    assert found.notes == []
    assert found.links == []


# -- search --------------------------------------------------------------------------------------


@pytest.fixture
async def particles(graph_store: GraphStore) -> GraphStore:
    await add(
        graph_store,
        make_note("alpha", "alpha particles are helium nuclei", created=at(1)),
        make_note("beta", "beta decay emits an electron", created=at(2)),
        make_note("gamma", "gamma rays are photons", created=at(3)),
    )
    return graph_store


async def test_search_ranks_the_better_match_first(graph_store: GraphStore) -> None:
    await add(
        graph_store,
        make_note(
            "weak", "python is one language among many used for scripting and data work", created=at(1)
        ),
        make_note("strong", "python python python snake", created=at(2)),
        make_note("other", "rust is a systems language", created=at(3)),
    )

    hits = await graph_store.search_notes("python", NoteFilter(scope=ALPHA), 10)

    assert ids(hit.note for hit in hits) == ["strong", "weak"]
    assert hits[0].score > hits[1].score > 0


async def test_search_prefers_notes_matching_more_words(graph_store: GraphStore) -> None:
    await add(
        graph_store,
        make_note("one-word", "a graph of monthly sales figures", created=at(1)),
        make_note("both-words", "a graph database stores nodes and edges", created=at(2)),
        make_note("other-word", "database tuning tips for everyone", created=at(3)),
    )

    hits = await graph_store.search_notes("graph database", NoteFilter(scope=ALPHA), 10)

    assert ids(hit.note for hit in hits)[0] == "both-words"
    assert sorted(ids(hit.note for hit in hits)) == ["both-words", "one-word", "other-word"]
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)


async def test_search_finds_notes_by_tag(graph_store: GraphStore) -> None:
    await add(
        graph_store,
        make_note("tagged", "deployment checklist", tags=["kubernetes"]),
        make_note("untagged", "deployment notes"),
    )

    hits = await graph_store.search_notes("kubernetes", NoteFilter(scope=ALPHA), 10)

    assert ids(hit.note for hit in hits) == ["tagged"]


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        pytest.param("alpha OR (beta", {"alpha", "beta"}, id="unbalanced-parenthesis"),
        pytest.param("NOT alpha", {"alpha"}, id="not-is-a-word"),
        pytest.param("beta AND NOT gamma", {"beta", "gamma"}, id="and-not-are-words"),
        pytest.param("NEAR(alpha beta", {"alpha", "beta"}, id="near"),
        pytest.param('gamma"', {"gamma"}, id="stray-quote"),
        pytest.param("gam*", set(), id="asterisk-is-no-prefix-query"),
        pytest.param("*", set(), id="asterisk-only"),
        pytest.param("NEAR(", set(), id="near-only"),
        pytest.param("content:gamma", {"gamma"}, id="column-filter"),
        pytest.param("alpha^2", {"alpha"}, id="boost"),
        pytest.param("'\") OR 1=1 --", set(), id="sql-injection"),
        pytest.param("DROP TABLE notes; --", set(), id="drop-table"),
        pytest.param("a OR (b", set(), id="stopwords-and-operators"),
        pytest.param("the and of", set(), id="stopwords-only"),
        pytest.param("", set(), id="empty"),
        pytest.param("   \t\n", set(), id="whitespace"),
        pytest.param("!!! ??? ---", set(), id="punctuation"),
    ],
)
async def test_search_treats_any_text_as_plain_words(
    particles: GraphStore, query: str, expected: set[str]
) -> None:
    hits = await particles.search_notes(query, NoteFilter(scope=ALPHA), 10)

    assert {hit.note.id for hit in hits} == expected
    assert await particles.count_notes(NoteFilter(scope=ALPHA)) == 3


async def test_search_honours_the_limit(particles: GraphStore) -> None:
    hits = await particles.search_notes("alpha beta gamma", NoteFilter(scope=ALPHA), 2)

    assert len(hits) == 2


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        pytest.param({}, {"k1", "k2", "k3"}, id="none"),
        pytest.param({"types": [NoteType.PREFERENCE]}, {"k2"}, id="types"),
        pytest.param({"tags": ["fruit"]}, {"k1", "k3"}, id="tags"),
        pytest.param({"thread_id": "t1"}, {"k1"}, id="thread"),
        pytest.param({"valid_at": at(2)}, {"k1", "k2"}, id="valid-at"),
        pytest.param({"types": [NoteType.DECISION], "tags": ["green"]}, {"k3"}, id="types-and-tags"),
    ],
)
async def test_search_applies_every_filter(
    graph_store: GraphStore, filters: dict[str, Any], expected: set[str]
) -> None:
    await add(
        graph_store,
        make_note("k1", "kiwi", type=NoteType.FACT, tags=["fruit"], thread_id="t1", created=at(1)),
        make_note("k2", "kiwi", type=NoteType.PREFERENCE, tags=["green"], thread_id="t2", created=at(2)),
        make_note(
            "k3", "kiwi", type=NoteType.DECISION, tags=["fruit", "green"], created=at(3), valid_to=at(1)
        ),
    )

    hits = await graph_store.search_notes("kiwi", NoteFilter(scope=ALPHA, **filters), 10)

    assert {hit.note.id for hit in hits} == expected


# -- list and count ------------------------------------------------------------------------------


@pytest.fixture
async def listed(graph_store: GraphStore) -> GraphStore:
    await add(
        graph_store,
        make_note("l1", type=NoteType.FACT, tags=["x"], thread_id="t1", created=at(1)),
        make_note("l2", type=NoteType.PREFERENCE, tags=["y"], thread_id="t1", created=at(2)),
        make_note("l3", type=NoteType.FACT, tags=["x", "y"], thread_id="t2", created=at(3), valid_from=at(3)),
        make_note("l4", type=NoteType.DECISION, created=at(4), valid_to=at(4)),
    )
    return graph_store


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        pytest.param({}, ["l4", "l3", "l2", "l1"], id="none"),
        pytest.param({"types": [NoteType.FACT]}, ["l3", "l1"], id="one-type"),
        pytest.param({"types": [NoteType.FACT, NoteType.DECISION]}, ["l4", "l3", "l1"], id="two-types"),
        pytest.param({"types": [NoteType.QUESTION]}, [], id="absent-type"),
        pytest.param({"tags": ["x"]}, ["l3", "l1"], id="one-tag"),
        pytest.param({"tags": ["y", "z"]}, ["l3", "l2"], id="any-of-tags"),
        pytest.param({"thread_id": "t1"}, ["l2", "l1"], id="thread"),
        pytest.param({"valid_at": at(2)}, ["l4", "l2", "l1"], id="before-valid-from"),
        pytest.param({"valid_at": at(3)}, ["l4", "l3", "l2", "l1"], id="at-valid-from"),
        pytest.param({"valid_at": at(4)}, ["l3", "l2", "l1"], id="at-valid-to"),
        pytest.param({"types": [NoteType.FACT], "tags": ["y"], "thread_id": "t2"}, ["l3"], id="combined"),
    ],
)
async def test_list_and_count_apply_every_filter_newest_first(
    listed: GraphStore, filters: dict[str, Any], expected: list[str]
) -> None:
    flt = NoteFilter(scope=ALPHA, **filters)

    assert ids(await listed.list_notes(flt, 10)) == expected
    assert await listed.count_notes(flt) == len(expected)


@pytest.mark.parametrize(
    ("limit", "offset", "expected"),
    [
        (2, 0, ["l4", "l3"]),
        (2, 2, ["l2", "l1"]),
        (3, 3, ["l1"]),
        (2, 4, []),
        (10, 0, ["l4", "l3", "l2", "l1"]),
    ],
)
async def test_list_pages_with_limit_and_offset(
    listed: GraphStore, limit: int, offset: int, expected: list[str]
) -> None:
    assert ids(await listed.list_notes(NoteFilter(scope=ALPHA), limit, offset)) == expected


# -- export: every link of a scope, and the scopes themselves -------------------------------------

ALL_LINKS = [
    ("a", "b", RELATES_TO),
    ("b", "c", SUPPORTS),
    ("c", "a", EXTENDS),
    ("c", "d", PART_OF),
    ("e", "a", ANSWERS),
]


@pytest.mark.parametrize(
    ("limit", "offset", "expected"),
    [
        (10, 0, ALL_LINKS),
        (2, 0, ALL_LINKS[:2]),
        (2, 2, ALL_LINKS[2:4]),
        (2, 4, ALL_LINKS[4:]),
        (2, 6, []),
    ],
)
async def test_list_links_pages_in_from_to_relation_order(
    graph: GraphStore, limit: int, offset: int, expected: list[tuple[str, str, Relation]]
) -> None:
    page = await graph.list_links(ALPHA, limit, offset)

    assert [(link.from_id, link.to_id, link.relation) for link in page] == expected


async def test_list_links_orders_relations_between_the_same_notes(graph_store: GraphStore) -> None:
    await add(graph_store, make_note("x"), make_note("y"))
    for relation in (Relation.TEMPORAL, Relation.ANSWERS, Relation.PART_OF, Relation.SUPERSEDES):
        await graph_store.upsert_link(make_link("x", "y", relation))

    relations = [link.relation.value for link in await graph_store.list_links(ALPHA, 10)]

    assert relations == ["answers", "part_of", "supersedes", "temporal"]


async def test_list_links_returns_every_field(graph_store: GraphStore) -> None:
    await add(graph_store, make_note("x"), make_note("y"))
    link = make_link("x", "y", SUPPORTS, strength=0.25, created=at(1), valid_from=at(2), valid_to=at(3))
    await graph_store.upsert_link(link)

    assert await graph_store.list_links(ALPHA, 10) == [link]


@pytest.mark.parametrize("other", OTHER_SCOPES)
async def test_list_links_stays_in_its_scope(graph: GraphStore, other: Scope) -> None:
    await add(graph, make_note("o1", scope=other), make_note("o2", scope=other))
    await graph.upsert_link(make_link("o1", "o2", scope=other))

    assert triples(await graph.list_links(other, 10)) == {("o1", "o2", RELATES_TO)}
    assert len(await graph.list_links(ALPHA, 10)) == len(ALL_LINKS)


async def test_scopes_lists_every_scope_holding_a_note_sorted(graph_store: GraphStore) -> None:
    assert await graph_store.scopes() == []
    beta, bob = Scope(project="beta", user="ann"), Scope(project="alpha", user="bob")
    await add(graph_store, make_note("n1", scope=beta), make_note("n2"), make_note("n3", scope=bob))
    await graph_store.upsert_note(make_note("n4", scope=beta))

    assert await graph_store.scopes() == [ALPHA, bob, beta]


async def test_move_scope_moves_every_note_with_its_links_and_nothing_else(graph: GraphStore) -> None:
    beta, bob = Scope(project="beta", user="ann"), Scope(project="alpha", user="bob")
    await add(graph, make_note("b1", scope=bob), make_note("b2", scope=bob))
    await graph.upsert_link(make_link("b1", "b2", scope=bob))
    notes = await graph.list_notes(NoteFilter(scope=ALPHA), 100)
    links = await graph.list_links(ALPHA, 100)

    moved = await graph.move_scope(ALPHA, "beta")

    assert moved == len(notes) == 6
    assert await graph.list_notes(NoteFilter(scope=ALPHA), 100) == []
    assert await graph.list_links(ALPHA, 100) == []
    assert await graph.list_notes(NoteFilter(scope=beta), 100) == [
        n.model_copy(update={"project": "beta"}) for n in notes
    ]
    assert await graph.list_links(beta, 100) == [k.model_copy(update={"project": "beta"}) for k in links]
    assert triples(await graph.list_links(bob, 10)) == {("b1", "b2", RELATES_TO)}
    walked = await graph.neighbourhood(beta, Walk(note_id="a", depth=1))
    assert {n.id for n in walked.notes} == {"b", "c", "e"}
    assert await graph.move_scope(ALPHA, "beta") == 0
