"""The VectorStore contract, run over every implementation.

``edge`` always runs, in the test's ``tmp_path``; so does ``memory``, the in-memory
stand-in the service tests use; ``qdrant_server`` runs when
HYBRID_MEMORY_TEST_QDRANT_URL is set (HYBRID_MEMORY_TEST_QDRANT_API_KEY if it needs
one), in a fresh collection per test that is dropped afterwards. Vectors are small
and hand-made; keyword vectors come from the real BM25 encoder. No embedding model.
"""

from __future__ import annotations

import os
import signal
import sys
import textwrap
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import anyio
import pytest
from anyio.abc import Process
from qdrant_client import AsyncQdrantClient

from hybrid_memory.backends.base import SearchResults, VectorStore
from hybrid_memory.backends.in_memory_vectors import InMemoryVectorStore, VectorData
from hybrid_memory.backends.qdrant_edge import EdgeVectorStore
from hybrid_memory.backends.qdrant_server import QdrantServerVectorStore
from hybrid_memory.embeddings.sparse import Bm25Encoder
from hybrid_memory.errors import (
    BackendUnavailableError,
    ConflictError,
    InvalidInputError,
    StoreLockedError,
)
from hybrid_memory.models import (
    Liveness,
    Memory,
    MemoryFilter,
    MemoryKind,
    MemoryRecord,
    NoteType,
    Scope,
    Searches,
)

DIM = 4
MODEL = "test-model"
T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
ALPHA = Scope(project="alpha", user="ann")
OTHER_SCOPES = [
    pytest.param(Scope(project="beta", user="ann"), id="other-project"),
    pytest.param(Scope(project="alpha", user="bob"), id="other-user"),
]
QDRANT_URL = os.environ.get("HYBRID_MEMORY_TEST_QDRANT_URL")
QDRANT_API_KEY = os.environ.get("HYBRID_MEMORY_TEST_QDRANT_API_KEY")
BM25 = Bm25Encoder()

StoreFactory = Callable[[], VectorStore]
"""A new, unopened store over the same data every time it is called."""


@pytest.fixture(
    params=[
        pytest.param("edge", id="edge"),
        pytest.param("memory", id="memory"),
        pytest.param(
            "qdrant_server",
            id="qdrant_server",
            marks=[
                pytest.mark.qdrant_server,
                pytest.mark.skipif(not QDRANT_URL, reason="HYBRID_MEMORY_TEST_QDRANT_URL is not set"),
            ],
        ),
    ]
)
async def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[StoreFactory]:
    if request.param == "edge":
        yield lambda: EdgeVectorStore(tmp_path / "vectors")
        return
    if request.param == "memory":
        data = VectorData()
        yield lambda: InMemoryVectorStore(data)
        return
    assert QDRANT_URL is not None
    collection = f"hybrid_memory_test_{uuid.uuid4().hex}"
    yield lambda: QdrantServerVectorStore(QDRANT_URL, QDRANT_API_KEY, collection, timeout_s=10)
    client = AsyncQdrantClient(url=QDRANT_URL, api_key=QDRANT_API_KEY, check_compatibility=False)
    try:
        await client.delete_collection(collection)
    finally:
        await client.close()


@pytest.fixture
async def store(make_store: StoreFactory) -> AsyncIterator[VectorStore]:
    opened = make_store()
    await opened.open(dimension=DIM, model=MODEL)
    try:
        yield opened
    finally:
        await opened.close()


def new_id() -> str:
    return str(uuid.uuid4())


def make_memory(text: str, *, scope: Scope = ALPHA, memory_id: str | None = None, **fields: Any) -> Memory:
    return Memory(
        id=memory_id or new_id(),
        kind=fields.pop("kind", MemoryKind.MESSAGE),
        text=text,
        project=scope.project,
        user=scope.user,
        created_at=fields.pop("created_at", T0),
        **fields,
    )


def make_record(memory: Memory, dense: Sequence[float] = (1.0, 0.0, 0.0, 0.0)) -> MemoryRecord:
    return MemoryRecord(memory=memory, dense=list(dense), sparse=BM25.encode_document(memory.text))


def scoped(scope: Scope = ALPHA, **conditions: Any) -> MemoryFilter:
    return MemoryFilter(scope=scope, **conditions)


async def scroll_all(store: VectorStore, flt: MemoryFilter, page: int = 100) -> list[Memory]:
    found: list[Memory] = []
    offset: str | None = None
    while True:
        memories, offset = await store.scroll(flt, page, offset)
        found.extend(memories)
        if offset is None:
            return found


# --- storing and reading back -------------------------------------------------------------------


async def test_upsert_then_get_returns_every_field(store: VectorStore) -> None:
    full = make_memory(
        "We chose Postgres for the ledger.",
        kind=MemoryKind.NOTE,
        thread_id="t-1",
        message_id="m-7#1",
        role="assistant",
        chunk_index=2,
        chunk_count=3,
        note_type=NoteType.DECISION,
        tags=["db", "ledger"],
        importance=0.75,
        created_at=datetime(2024, 5, 1, 12, 30, 15, 123456, tzinfo=UTC),
        valid_from=datetime(2024, 5, 2, tzinfo=UTC),
        valid_to=datetime(2025, 1, 1, 8, tzinfo=UTC),
        source="create_note",
        tokens=17,
        pinned=True,
    )
    bare = make_memory("hello")
    await store.upsert([make_record(full), make_record(bare)])

    got = {m.id: m for m in await store.get(ALPHA, [full.id, bare.id])}

    assert got == {full.id: full, bare.id: bare}
    assert got[full.id].created_at.utcoffset() == timedelta(0)


async def test_datetimes_come_back_in_utc(store: VectorStore) -> None:
    berlin = timezone(timedelta(hours=2))
    memory = make_memory("offset", created_at=datetime(2024, 5, 1, 14, 0, tzinfo=berlin))
    await store.upsert([make_record(memory)])

    [got] = await store.get(ALPHA, [memory.id])

    assert got.created_at == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
    assert got.created_at.utcoffset() == timedelta(0)


async def test_upsert_of_the_same_id_replaces(store: VectorStore) -> None:
    memory = make_memory("first version")
    await store.upsert([make_record(memory)])
    await store.upsert([make_record(memory.model_copy(update={"text": "second version"}), (0, 1, 0, 0))])
    await store.upsert([make_record(memory.model_copy(update={"text": "second version"}), (0, 1, 0, 0))])

    assert await store.count(scoped()) == 1
    assert [m.text for m in await store.get(ALPHA, [memory.id])] == ["second version"]
    hits = await store.search_dense([0, 1, 0, 0], scoped(), 10)
    assert [(h.memory.id, round(h.score, 3)) for h in hits] == [(memory.id, 1.0)]


async def test_empty_store_answers_with_nothing(store: VectorStore) -> None:
    assert await store.search_dense([1, 0, 0, 0], scoped(), 10) == []
    assert await store.search_sparse(BM25.encode_query("anything"), scoped(), 10) == []
    assert await store.scroll(scoped(), 10) == ([], None)
    assert await store.count(scoped()) == 0
    assert await store.thread_counts(ALPHA, 10) == {}
    assert await store.get(ALPHA, [new_id()]) == []
    assert await store.delete(ALPHA, [new_id()]) == 0
    assert await store.set_payload(ALPHA, new_id(), {"pinned": True}) is False


async def test_bad_input_is_refused_and_nothing_is_stored(store: VectorStore) -> None:
    good = make_memory("fine")
    with pytest.raises(InvalidInputError, match="has 3 dimensions; this store holds 4"):
        await store.upsert([make_record(good), make_record(make_memory("short"), (1, 0, 0))])
    with pytest.raises(InvalidInputError, match="is not a UUID"):
        await store.upsert([make_record(make_memory("bad id", memory_id="note-12"))])
    with pytest.raises(InvalidInputError, match="2 indices but 1 values"):
        await store.upsert(
            [MemoryRecord(memory=good, dense=[1, 0, 0, 0], sparse={"indices": [1, 2], "values": [1.0]})]
        )
    with pytest.raises(InvalidInputError, match="limit must be at least 1"):
        await store.search_dense([1, 0, 0, 0], scoped(), 0)
    with pytest.raises(InvalidInputError, match="not one that scroll returned"):
        await store.scroll(scoped(), 10, "page-2")

    assert await store.count(scoped()) == 0


async def test_ids_that_are_not_uuids_find_nothing(store: VectorStore) -> None:
    memory = make_memory("kept")
    await store.upsert([make_record(memory)])

    assert await store.get(ALPHA, ["n-12", memory.id]) == [memory]
    assert await store.delete(ALPHA, ["n-12"]) == 0
    assert await store.set_payload(ALPHA, "n-12", {"pinned": True}) is False


# --- ranking ----------------------------------------------------------------------------------------


async def test_search_dense_ranks_by_cosine_similarity(store: VectorStore) -> None:
    same, near, orthogonal, opposite = (make_memory(t) for t in ("same", "near", "orthogonal", "opposite"))
    await store.upsert(
        [
            make_record(orthogonal, (0, 1, 0, 0)),
            make_record(opposite, (-2, 0, 0, 0)),
            make_record(same, (3, 0, 0, 0)),
            make_record(near, (1, 1, 0, 0)),
        ]
    )

    hits = await store.search_dense([1, 0, 0, 0], scoped(), 10)

    # The embedded store keeps its vectors as float16: cosines to three places.
    assert [(h.memory.id, round(h.score, 3)) for h in hits] == [
        (same.id, 1.0),
        (near.id, 0.707),
        (orthogonal.id, 0.0),
        (opposite.id, -1.0),
    ]
    assert [h.memory.id for h in await store.search_dense([1, 0, 0, 0], scoped(), 2)] == [same.id, near.id]


async def test_search_sparse_finds_the_keyword_match_first(store: VectorStore) -> None:
    kube = make_memory("The deployment runs on Kubernetes clusters.")
    weather = make_memory("We talked about the weather.")
    lunch = make_memory("Lunch plans for Friday.")
    await store.upsert([make_record(m) for m in (weather, kube, lunch)])

    hits = await store.search_sparse(BM25.encode_query("kubernetes"), scoped(), 10)

    assert [h.memory.id for h in hits] == [kube.id]
    assert hits[0].score > 0


async def test_search_sparse_with_context_uses_the_context_vector(store: VectorStore) -> None:
    reply = make_memory("Yes, last May.")
    question = "Did you visit Lisbon? Yes, last May."
    record = make_record(reply).model_copy(update={"sparse_context": BM25.encode_document(question)})
    plain = make_memory("Lisbon has trams.")
    await store.upsert([record, make_record(plain)])

    own = await store.search_sparse(BM25.encode_query("Lisbon visit"), scoped(), 10)
    with_context = await store.search_sparse(BM25.encode_query("Lisbon visit"), scoped(), 10, context=True)

    assert [h.memory.id for h in own] == [plain.id]
    # without a context vector of its own, a record's context is its own text
    assert [h.memory.id for h in with_context] == [reply.id, plain.id]


async def test_search_sparse_weighs_a_rare_term_above_a_common_one(store: VectorStore) -> None:
    # Every document has two terms, so only the terms' IDF can tell the first two apart.
    rare = make_memory("zeppelin meeting")
    common = make_memory("project meeting")
    others = [make_memory(f"project {word}") for word in ("budget", "timeline", "status", "review")]
    await store.upsert([make_record(m) for m in (common, *others, rare)])

    hits = await store.search_sparse(BM25.encode_query("project zeppelin"), scoped(), 10)

    assert hits[0].memory.id == rare.id
    scores = {h.memory.id: h.score for h in hits}
    assert scores[rare.id] > scores[common.id]
    assert len(hits) == 6


async def test_search_sparse_of_stop_words_only_finds_nothing(store: VectorStore) -> None:
    await store.upsert([make_record(make_memory("the and of"))])

    assert await store.search_sparse(BM25.encode_query("the of"), scoped(), 10) == []


async def test_search_many_answers_each_search_as_its_single_call_does(store: VectorStore) -> None:
    reply = make_memory("Yes, last May.")
    record = make_record(reply, (0, 1, 0, 0)).model_copy(
        update={"sparse_context": BM25.encode_document("Did you visit Lisbon? Yes, last May.")}
    )
    plain = make_memory("Lisbon has trams.")
    other = make_memory("Lunch plans for Friday.")
    await store.upsert([record, make_record(plain, (1, 0, 0, 0)), make_record(other, (1, 1, 0, 0))])
    query = BM25.encode_query("Lisbon visit")
    flt = scoped()

    found = await store.search_many(flt, 10, Searches(dense=[1, 0, 0, 0], keyword=query, context=query))

    assert found == {
        "dense": await store.search_dense([1, 0, 0, 0], flt, 10),
        "keyword": await store.search_sparse(query, flt, 10),
        "context": await store.search_sparse(query, flt, 10, context=True),
    }
    assert [h.memory.id for h in found["context"]] == [reply.id, plain.id]


async def test_search_ids_ranks_as_search_many_does_without_the_memories(store: VectorStore) -> None:
    reply = make_memory("Yes, last May.")
    record = make_record(reply, (0, 1, 0, 0)).model_copy(
        update={"sparse_context": BM25.encode_document("Did you visit Lisbon? Yes, last May.")}
    )
    await store.upsert([record, make_record(make_memory("Lisbon has trams."), (1, 0, 0, 0))])
    query = BM25.encode_query("Lisbon visit")
    searches = Searches(dense=[1, 0, 0, 0], keyword=query, context=query)

    ranked = await store.search_ids(scoped(), 10, searches)

    found = await store.search_many(scoped(), 10, searches)
    assert ranked == {name: [(h.memory.id, h.score) for h in hits] for name, hits in found.items()}
    stop_words = Searches(keyword=BM25.encode_query("the of"))
    assert await store.search_ids(scoped(), 10, stop_words) == {"keyword": []}


async def test_search_many_sees_every_write_made_before_it(store: VectorStore) -> None:
    # Stores may keep what they read (Edge keeps decoded memories): a write must never leave the old copy.
    memory = make_memory("The ferry leaves at nine.")
    await store.upsert([make_record(memory)])
    searches = Searches(dense=[1, 0, 0, 0], keyword=BM25.encode_query("ferry"))

    def texts(found: SearchResults) -> list[tuple[str, str, bool]]:
        return [(h.memory.id, h.memory.text, h.memory.pinned) for h in found["dense"] + found["keyword"]]

    canonical = memory.id
    assert texts(await store.search_many(scoped(), 10, searches)) == [(canonical, memory.text, False)] * 2
    changed = memory.model_copy(update={"text": "The ferry leaves at ten."})
    await store.upsert([make_record(changed)])
    assert texts(await store.search_many(scoped(), 10, searches)) == [(canonical, changed.text, False)] * 2
    assert await store.set_payload(ALPHA, memory.id, {"pinned": True}) is True
    assert texts(await store.search_many(scoped(), 10, searches)) == [(canonical, changed.text, True)] * 2
    assert await store.delete(ALPHA, [memory.id]) == 1
    assert await store.search_many(scoped(), 10, searches) == {"dense": [], "keyword": []}


async def test_a_cached_memory_is_the_stored_one_and_a_write_drops_it(store: VectorStore) -> None:
    memory = make_memory("The ferry leaves at nine.")
    await store.upsert([make_record(memory)])
    await store.search_many(scoped(), 10, Searches(keyword=BM25.encode_query("ferry")))  # a read

    held = store.cached([memory.id])

    assert held in ({}, {memory.id: memory})  # a store may keep nothing
    await store.upsert([make_record(memory.model_copy(update={"text": "The ferry leaves at ten."}))])
    assert store.cached([memory.id]) == {}


async def test_search_many_runs_only_the_searches_given(store: VectorStore) -> None:
    await store.upsert([make_record(make_memory("the and of"))])

    assert await store.search_many(scoped(), 10, Searches()) == {}
    nothing = Searches(keyword=BM25.encode_query("the of"))
    assert await store.search_many(scoped(), 10, nothing) == {"keyword": []}
    assert list(await store.search_many(scoped(), 10, Searches(dense=[1, 0, 0, 0]))) == ["dense"]
    with pytest.raises(InvalidInputError, match="limit must be at least 1"):
        await store.search_many(scoped(), 0, Searches(dense=[1, 0, 0, 0]))


DAY = timedelta(days=1)


# --- filters ----------------------------------------------------------------------------------------


def filter_dataset() -> dict[str, Memory]:
    day = timedelta(days=1)
    message, note, summary = MemoryKind.MESSAGE, MemoryKind.NOTE, MemoryKind.SUMMARY
    return {
        "m1": make_memory("memo one", kind=message, thread_id="t1", tags=["red"], created_at=T0, pinned=True),
        "m2": make_memory(
            "memo two",
            kind=message,
            thread_id="t1",
            tags=["blue"],
            created_at=T0 + day,
            expires_at=T0 + 9 * day,
        ),
        "m3": make_memory(
            "memo three", kind=message, thread_id="t2", tags=["red", "green"], created_at=T0 + 2 * day
        ),
        "n1": make_memory(
            "memo four",
            kind=note,
            note_type=NoteType.FACT,
            tags=["green"],
            created_at=T0 + 3 * day,
            private=True,
            expires_at=T0 + 20 * day,
        ),
        "n2": make_memory(
            "memo five", kind=note, note_type=NoteType.DECISION, thread_id="t2", created_at=T0 + 4 * day
        ),
        "s1": make_memory("memo six", kind=summary, thread_id="t1", created_at=T0 + 5 * day),
    }


FILTER_CASES: list[tuple[str, dict[str, Any], set[str]]] = [
    ("scope only", {}, {"m1", "m2", "m3", "n1", "n2", "s1"}),
    ("thread", {"thread_id": "t1"}, {"m1", "m2", "s1"}),
    ("kind", {"kinds": [MemoryKind.NOTE]}, {"n1", "n2"}),
    ("kinds", {"kinds": [MemoryKind.MESSAGE, MemoryKind.SUMMARY]}, {"m1", "m2", "m3", "s1"}),
    ("no kinds", {"kinds": []}, set()),
    ("note type", {"note_types": [NoteType.DECISION]}, {"n2"}),
    ("note types", {"note_types": [NoteType.FACT, NoteType.DECISION]}, {"n1", "n2"}),
    ("tag", {"tags": ["red"]}, {"m1", "m3"}),
    ("tags are any-of", {"tags": ["red", "green"]}, {"m1", "m3", "n1"}),
    ("created_after is inclusive", {"created_after": T0 + timedelta(days=1)}, {"m2", "m3", "n1", "n2", "s1"}),
    ("created_before is exclusive", {"created_before": T0 + timedelta(days=2)}, {"m1", "m2"}),
    (
        "created window",
        {"created_after": T0 + timedelta(hours=1), "created_before": T0 + timedelta(days=3)},
        {"m2", "m3"},
    ),
    ("thread and kind", {"thread_id": "t2", "kinds": [MemoryKind.NOTE]}, {"n2"}),
    ("pinned", {"pinned": True}, {"m1"}),
    ("not pinned", {"pinned": False}, {"m2", "m3", "n1", "n2", "s1"}),
    ("private", {"private": True}, {"n1"}),
    ("not private", {"private": False}, {"m1", "m2", "m3", "n2", "s1"}),
    ("expires_before is exclusive", {"expires_before": T0 + timedelta(days=20)}, {"m2"}),
    ("expires_before", {"expires_before": T0 + timedelta(days=21)}, {"m2", "n1"}),
    ("alive before anything expires", {"alive": Liveness(now=T0)}, {"m1", "m2", "m3", "n1", "n2", "s1"}),
    (
        "alive: expires_at at now has expired",
        {"alive": Liveness(now=T0 + 9 * DAY)},
        {"m1", "m3", "n1", "n2", "s1"},
    ),
    (
        "alive under retention: a pin always wins",
        {"alive": Liveness(now=T0 + 30 * DAY, retained_from=T0 + 3 * DAY)},
        {"m1", "n2", "s1"},
    ),
]


async def test_every_read_applies_every_filter_field(store: VectorStore) -> None:
    # One store for all cases: opening a store costs more than every query here together.
    data = filter_dataset()
    await store.upsert([make_record(m, (1, i, 0, 0)) for i, m in enumerate(data.values())])
    names = {m.id: name for name, m in data.items()}
    keyword = BM25.encode_query("memo")

    for case, conditions, expected in FILTER_CASES:
        flt = scoped(**conditions)
        assert await store.count(flt) == len(expected), case
        assert {names[m.id] for m in await scroll_all(store, flt)} == expected, case
        assert {names[h.memory.id] for h in await store.search_dense([1, 0, 0, 0], flt, 100)} == expected, (
            case
        )
        assert {names[h.memory.id] for h in await store.search_sparse(keyword, flt, 100)} == expected, case


async def test_ids_filter_keeps_only_stored_ids(store: VectorStore) -> None:
    data = filter_dataset()
    await store.upsert([make_record(m) for m in data.values()])
    flt = scoped(ids=[data["m1"].id, data["n2"].id, new_id(), "not-a-uuid"])

    assert await store.count(flt) == 2
    assert {m.id for m in await scroll_all(store, flt)} == {data["m1"].id, data["n2"].id}
    assert {h.memory.id for h in await store.search_dense([1, 0, 0, 0], flt, 10)} == {
        data["m1"].id,
        data["n2"].id,
    }
    assert await store.count(scoped(ids=[])) == 0


# --- scope isolation --------------------------------------------------------------------------------


@pytest.mark.parametrize("other", OTHER_SCOPES)
async def test_nothing_crosses_scopes(store: VectorStore, other: Scope) -> None:
    mine = make_memory("shared words here", thread_id="shared")
    theirs = make_memory("shared words here", scope=other, thread_id="shared")
    await store.upsert([make_record(mine), make_record(theirs)])
    both = [mine.id, theirs.id]

    for scope, own in ((ALPHA, mine), (other, theirs)):
        assert [h.memory.id for h in await store.search_dense([1, 0, 0, 0], scoped(scope), 10)] == [own.id]
        assert [
            h.memory.id for h in await store.search_sparse(BM25.encode_query("shared"), scoped(scope), 10)
        ] == [own.id]
        assert await store.scroll(scoped(scope), 10) == ([own], None)
        assert await store.count(scoped(scope)) == 1
        assert await store.count(scoped(scope, ids=both)) == 1
        assert await store.get(scope, both) == [own]
        assert await store.thread_counts(scope, 10) == {"shared": 1}


@pytest.mark.parametrize("other", OTHER_SCOPES)
async def test_writes_do_not_reach_another_scope(store: VectorStore, other: Scope) -> None:
    theirs = make_memory("not yours", scope=other)
    await store.upsert([make_record(theirs)])

    assert await store.delete(ALPHA, [theirs.id]) == 0
    assert await store.set_payload(ALPHA, theirs.id, {"pinned": True, "text": "hijacked"}) is False
    assert await store.get(other, [theirs.id]) == [theirs]


# --- paging, counting, grouping -------------------------------------------------------------------


async def test_scroll_pages_cover_every_memory_exactly_once(store: VectorStore) -> None:
    memories = [make_memory(f"memo {i}") for i in range(25)]
    await store.upsert([make_record(m) for m in memories])
    await store.upsert([make_record(make_memory("elsewhere", scope=Scope(project="beta")))])

    pages: list[list[str]] = []
    offset: str | None = None
    while True:
        page, offset = await store.scroll(scoped(), 7, offset)
        pages.append([m.id for m in page])
        if offset is None:
            break

    assert [len(p) for p in pages] == [7, 7, 7, 4]
    assert sorted(i for p in pages for i in p) == sorted(m.id for m in memories)


async def test_thread_counts_are_largest_first_and_limited(store: VectorStore) -> None:
    threads = ["t1", "t2", "t1", "t3", "t1", "t2", None]
    await store.upsert([make_record(make_memory(f"memo {i}", thread_id=t)) for i, t in enumerate(threads)])

    assert list((await store.thread_counts(ALPHA, 10)).items()) == [("t1", 3), ("t2", 2), ("t3", 1)]
    assert list((await store.thread_counts(ALPHA, 2)).items()) == [("t1", 3), ("t2", 2)]


# --- set_payload and delete ---------------------------------------------------------------------------


async def test_set_payload_updates_only_the_given_fields(store: VectorStore) -> None:
    memory = make_memory("pin me", tags=["x"], valid_to=T0 + timedelta(days=30))
    await store.upsert([make_record(memory, (1, 1, 0, 0))])
    closed = T0 + timedelta(days=2, microseconds=5)

    assert await store.set_payload(ALPHA, memory.id, {"pinned": True, "valid_to": closed}) is True
    assert await store.get(ALPHA, [memory.id]) == [
        memory.model_copy(update={"pinned": True, "valid_to": closed})
    ]

    assert await store.set_payload(ALPHA, memory.id, {"valid_to": None}) is True
    [reopened] = await store.get(ALPHA, [memory.id])
    assert (reopened.valid_to, reopened.pinned, reopened.tags) == (None, True, ["x"])
    hits = await store.search_dense([1, 1, 0, 0], scoped(), 10)
    assert [(h.memory.id, round(h.score, 3)) for h in hits] == [(memory.id, 1.0)]


async def test_set_payload_refuses_scope_and_unknown_fields(store: VectorStore) -> None:
    memory = make_memory("stay")
    await store.upsert([make_record(memory)])

    with pytest.raises(InvalidInputError, match="project cannot be changed"):
        await store.set_payload(ALPHA, memory.id, {"project": "beta"})
    with pytest.raises(InvalidInputError, match="Unknown memory fields: colour"):
        await store.set_payload(ALPHA, memory.id, {"colour": "red"})
    with pytest.raises(InvalidInputError, match="Invalid memory field value"):
        await store.set_payload(ALPHA, memory.id, {"pinned": "sometimes"})
    assert await store.get(ALPHA, [memory.id]) == [memory]


async def test_delete_returns_how_many_existed(store: VectorStore) -> None:
    memories = [make_memory(f"memo {i}") for i in range(3)]
    await store.upsert([make_record(m) for m in memories])

    assert await store.delete(ALPHA, [memories[0].id, memories[1].id, new_id(), "bogus"]) == 2
    assert await store.delete(ALPHA, [memories[0].id]) == 0
    assert await scroll_all(store, scoped()) == [memories[2]]


# --- lifecycle ------------------------------------------------------------------------------------------


async def test_reopen_keeps_the_data(make_store: StoreFactory) -> None:
    memory = make_memory("remember me", thread_id="t1")
    first = make_store()
    await first.open(dimension=DIM, model=MODEL)
    await first.upsert([make_record(memory)])
    await first.close()

    again = make_store()
    await again.open(dimension=DIM, model=MODEL)
    try:
        assert await again.get(ALPHA, [memory.id]) == [memory]
        hits = await again.search_sparse(BM25.encode_query("remember"), scoped(), 10)
        assert [h.memory.id for h in hits] == [memory.id]
        assert await again.thread_counts(ALPHA, 10) == {"t1": 1}
    finally:
        await again.close()


@pytest.mark.parametrize(
    ("model", "dimension", "says"),
    [
        pytest.param("other-model", DIM, "but 'other-model' (dimension 4) is configured", id="model"),
        pytest.param(MODEL, 8, "but 'test-model' (dimension 8) is configured", id="dimension"),
    ],
)
async def test_reopen_with_another_model_is_refused(
    make_store: StoreFactory, model: str, dimension: int, says: str
) -> None:
    memory = make_memory("made by test-model")
    first = make_store()
    await first.open(dimension=DIM, model=MODEL)
    await first.upsert([make_record(memory)])
    await first.close()

    with pytest.raises(ConflictError) as refused:
        await make_store().open(dimension=dimension, model=model)
    message = str(refused.value)
    assert "was filled by embedding model 'test-model' (dimension 4)" in message
    assert says in message
    assert "`hybrid-memory export`" in message
    assert "`hybrid-memory import`" in message

    # The refusal changed nothing: the right model still opens the same data.
    again = make_store()
    await again.open(dimension=DIM, model=MODEL)
    try:
        assert await again.get(ALPHA, [memory.id]) == [memory]
    finally:
        await again.close()


async def test_unreachable_server_fails_fast_and_clearly() -> None:
    store = QdrantServerVectorStore("http://127.0.0.1:1", None, "memories", timeout_s=2)

    with anyio.fail_after(15), pytest.raises(BackendUnavailableError) as failed:
        await store.open(dimension=DIM, model=MODEL)

    message = str(failed.value)
    assert message.startswith("Qdrant at http://127.0.0.1:1 did not answer within 2s: ")
    assert message.endswith("Start it or fix QDRANT_URL.")
    assert failed.value.__cause__ is not None
    await store.close()


# --- Edge only: one process owns a store directory --------------------------------------------------

CHILD = textwrap.dedent(
    """
    import sys
    from pathlib import Path

    import anyio

    from hybrid_memory.backends.qdrant_edge import EdgeVectorStore
    from hybrid_memory.embeddings.sparse import Bm25Encoder
    from hybrid_memory.errors import HybridMemoryError
    from hybrid_memory.models import Memory, MemoryRecord

    async def main(path: str, action: str, memory_id: str = "") -> None:
        store = EdgeVectorStore(Path(path))
        try:
            await store.open(dimension=4, model="test-model")
        except HybridMemoryError as exc:
            print(f"{type(exc).__name__}|{exc}", flush=True)
            return
        if action == "write":
            text = "written before the crash"
            memory = Memory(id=memory_id, kind="message", text=text, project="alpha", user="ann")
            sparse = Bm25Encoder().encode_document(memory.text)
            await store.upsert([MemoryRecord(memory=memory, dense=[1, 0, 0, 0], sparse=sparse)])
        print("ready", flush=True)
        sys.stdin.readline()  # hold the store until the parent says so (or kills us)
        await store.close()

    anyio.run(main, *sys.argv[1:])
    """
)


def child_command(path: Path, action: str, *args: str) -> list[str]:
    return [sys.executable, "-c", CHILD, str(path), action, *args]


async def read_line(process: Process) -> str:
    assert process.stdout is not None
    buffer = b""
    with anyio.fail_after(60):
        while not buffer.endswith(b"\n"):
            buffer += await process.stdout.receive()
    return buffer.decode().strip()


def locked_message(path: Path, pid: int) -> str:
    return (
        f"The memory store at {path} is already in use by another hybrid-memory process (pid {pid}). "
        "Run one shared server (`hybrid-memory serve --transport http`) and point every client at it, "
        "or set HYBRID_MEMORY_DATA_DIR to another directory."
    )


async def test_second_process_is_refused_while_the_owner_keeps_working(tmp_path: Path) -> None:
    path = tmp_path / "vectors"
    memory = make_memory("owned")
    owner = EdgeVectorStore(path)
    await owner.open(dimension=DIM, model=MODEL)
    try:
        await owner.upsert([make_record(memory)])

        result = await anyio.run_process(child_command(path, "hold"), check=False)

        assert result.stdout.decode().strip() == f"StoreLockedError|{locked_message(path, os.getpid())}"
        assert await owner.get(ALPHA, [memory.id]) == [memory]
        await owner.upsert([make_record(make_memory("still writable"))])
        assert await owner.count(scoped()) == 2
    finally:
        await owner.close()

    reopened = EdgeVectorStore(path)
    await reopened.open(dimension=DIM, model=MODEL)
    try:
        assert await reopened.count(scoped()) == 2
    finally:
        await reopened.close()


async def test_store_held_by_another_process_is_refused_until_it_exits(tmp_path: Path) -> None:
    path = tmp_path / "vectors"
    memory = make_memory("written first")
    first = EdgeVectorStore(path)
    await first.open(dimension=DIM, model=MODEL)
    await first.upsert([make_record(memory)])
    await first.close()

    async with await anyio.open_process(child_command(path, "hold")) as child:
        assert await read_line(child) == "ready"
        with pytest.raises(StoreLockedError) as refused:
            await EdgeVectorStore(path).open(dimension=DIM, model=MODEL)
        assert str(refused.value) == locked_message(path, child.pid)
        assert child.stdin is not None
        await child.stdin.send(b"go\n")
        assert await child.wait() == 0

    after = EdgeVectorStore(path)
    await after.open(dimension=DIM, model=MODEL)
    try:
        assert await after.get(ALPHA, [memory.id]) == [memory]
    finally:
        await after.close()


async def test_a_killed_owner_loses_no_acknowledged_write(tmp_path: Path) -> None:
    path = tmp_path / "vectors"
    memory_id = new_id()
    async with await anyio.open_process(child_command(path, "write", memory_id)) as child:
        assert await read_line(child) == "ready"
        child.send_signal(signal.SIGKILL)
        assert await child.wait() == -signal.SIGKILL

    survivor = EdgeVectorStore(path)
    await survivor.open(dimension=DIM, model=MODEL)
    try:
        assert [m.text for m in await survivor.get(ALPHA, [memory_id])] == ["written before the crash"]
    finally:
        await survivor.close()


async def test_opening_a_store_twice_in_one_process_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "vectors"
    first = EdgeVectorStore(path)
    await first.open(dimension=DIM, model=MODEL)
    try:
        with pytest.raises(StoreLockedError, match=r"is already open in this process \(pid \d+\)"):
            await EdgeVectorStore(path).open(dimension=DIM, model=MODEL)
    finally:
        await first.close()


async def test_optimize_keeps_every_memory_searchable(tmp_path: Path) -> None:
    store = EdgeVectorStore(tmp_path / "vectors")
    await store.open(dimension=DIM, model=MODEL)
    try:
        memories = [make_memory(f"memo {i}") for i in range(50)]
        await store.upsert([make_record(m, (1, i, 0, 0)) for i, m in enumerate(memories)])
        await store.optimize()
        assert await store.count(scoped()) == 50
        assert [h.memory.id for h in await store.search_dense([1, 0, 0, 0], scoped(), 1)] == [memories[0].id]
    finally:
        await store.close()


# --- export: vectors and scopes -----------------------------------------------------------------


async def test_dense_vectors_come_back_by_id_within_the_scope(store: VectorStore) -> None:
    ours = make_memory("ours")
    theirs = make_memory("theirs", scope=Scope(project="beta", user="ann"))
    await store.upsert([make_record(ours, (0.0, 1.0, 0.0, 0.0)), make_record(theirs)])

    found = await store.dense_vectors(ALPHA, [ours.id, theirs.id, new_id(), "not-a-uuid"])

    assert list(found) == [ours.id]
    assert found[ours.id] == pytest.approx([0.0, 1.0, 0.0, 0.0])


async def test_scopes_lists_every_scope_holding_a_memory_sorted(store: VectorStore) -> None:
    assert await store.scopes() == []
    beta, bob = Scope(project="beta", user="ann"), Scope(project="alpha", user="bob")
    await store.upsert([make_record(make_memory("x", scope=s)) for s in (beta, ALPHA, bob, beta)])

    assert await store.scopes() == [ALPHA, bob, beta]
