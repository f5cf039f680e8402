"""remember_thread, list_threads and forget, on in-memory stores."""

from __future__ import annotations

import pytest

from hybrid_memory.errors import InvalidInputError, NotFoundError
from hybrid_memory.models import (
    ContentBlock,
    MemoryFilter,
    MemoryKind,
    MessageIn,
    NoteFilter,
    NoteType,
    Relation,
)
from hybrid_memory.service import NoteDraft, RecallOptions, ThreadDraft, memory_id

from .conftest import SCOPE, Harness, MakeService, messages


async def test_remember_thread_stores_each_message_under_its_deterministic_id(harness: Harness) -> None:
    result = await harness.service.remember_thread(
        SCOPE, ThreadDraft("t1", messages("Where is the ledger?", "In Postgres."))
    )

    assert (result.stored, result.unchanged, result.skipped_messages, result.chunks) == (2, 0, 0, 2)
    assert result.memory_ids == [memory_id(SCOPE, "t1", "m0", 0), memory_id(SCOPE, "t1", "m1", 0)]
    stored = {m.id: m for m in await harness.vectors.get(SCOPE, result.memory_ids)}
    first, second = (stored[i] for i in result.memory_ids)
    assert (first.role, first.text, first.kind, first.thread_id) == (
        "user",
        "Where is the ledger?",
        "message",
        "t1",
    )
    assert (first.next_id, second.prev_id) == (second.id, first.id)
    assert first.tokens == harness.embedder.count_tokens("Where is the ledger?")


async def test_remembering_a_thread_again_writes_nothing(harness: Harness) -> None:
    turns = messages("We chose Postgres.", "Good choice.")
    await harness.service.remember_thread(SCOPE, ThreadDraft("t1", turns))

    again = await harness.service.remember_thread(SCOPE, ThreadDraft("t1", turns))

    assert (again.stored, again.unchanged, again.chunks) == (0, 2, 0)
    assert await harness.count() == 2


async def test_an_edited_message_is_updated_in_place_keeping_its_pin(harness: Harness) -> None:
    first = await harness.service.remember_thread(
        SCOPE, ThreadDraft("t1", messages("Deploy on Friday.", "Noted."))
    )
    await harness.service.pin(SCOPE, first.memory_ids[0], True)

    edited = await harness.service.remember_thread(
        SCOPE, ThreadDraft("t1", messages("Deploy on Monday.", "Noted."))
    )

    assert (edited.stored, edited.unchanged, edited.chunks) == (1, 1, 1)
    assert edited.memory_ids == first.memory_ids
    [memory] = await harness.vectors.get(SCOPE, [first.memory_ids[0]])
    assert (memory.text, memory.pinned) == ("Deploy on Monday.", True)
    assert await harness.count() == 2


async def test_other_roles_empty_messages_and_non_text_blocks_are_skipped_and_counted(
    harness: Harness,
) -> None:
    turns = [
        MessageIn(role="system", content="You are helpful."),
        MessageIn(role="tool", content="{}"),
        MessageIn(role="user", content="   "),
        MessageIn(
            role="assistant",
            content=[ContentBlock(type="text", text="The answer is 42."), ContentBlock(type="tool_use")],
        ),
    ]

    result = await harness.service.remember_thread(SCOPE, ThreadDraft("t1", turns))

    assert result.skipped_reasons == {"role:system": 1, "role:tool": 1, "empty": 1, "block:tool_use": 1}
    assert (result.stored, result.skipped_messages, result.skipped_blocks) == (1, 3, 1)
    assert [m.text for m in (await harness.vectors.scroll(MemoryFilter(scope=SCOPE), 10))[0]] == [
        "The answer is 42."
    ]


async def test_a_long_message_is_split_into_overlapping_chunks(make_service: MakeService) -> None:
    harness = await make_service(chunk_tokens=16, chunk_overlap_tokens=4)
    text = " ".join(f"word{i}." for i in range(40))  # 80 fake tokens

    result = await harness.service.remember_thread(
        SCOPE, ThreadDraft("t1", [MessageIn(role="user", content=text, id="long")])
    )

    chunks = sorted(await harness.vectors.get(SCOPE, result.memory_ids), key=lambda m: m.chunk_index)
    assert result.stored == 1
    assert result.chunks == len(chunks) > 4
    assert [m.chunk_index for m in chunks] == list(range(len(chunks)))
    assert {m.chunk_count for m in chunks} == {len(chunks)}
    assert all(harness.embedder.count_tokens(m.text) <= 16 for m in chunks)
    assert chunks[0].text.startswith("word0.")
    assert chunks[-1].text.endswith("word39.")


async def test_the_same_message_id_twice_in_one_call_keeps_both(harness: Harness) -> None:
    turns = [MessageIn(role="user", content="ok", id="x"), MessageIn(role="user", content="ok", id="x")]

    result = await harness.service.remember_thread(SCOPE, ThreadDraft("t1", turns))

    assert result.memory_ids == [memory_id(SCOPE, "t1", "x", 0), memory_id(SCOPE, "t1", "x#1", 0)]


async def test_secrets_are_redacted_before_storing(harness: Harness) -> None:
    key = "sk-" + "a1b2c3d4" * 4
    result = await harness.service.remember_thread(
        SCOPE, ThreadDraft("t1", [MessageIn(role="user", content=f"my key {key}")])
    )

    [memory] = await harness.vectors.get(SCOPE, result.memory_ids)
    assert result.redacted == 1
    assert key not in memory.text
    assert "[REDACTED:api_key]" in memory.text


async def test_a_reply_is_found_by_the_words_of_the_question_it_answers(harness: Harness) -> None:
    await harness.service.remember_thread(
        SCOPE, ThreadDraft("t1", messages("Did you visit Lisbon?", "Yes, last May."))
    )

    result = await harness.service.recall(SCOPE, "Lisbon visit", RecallOptions(limit=5))

    reply = next(hit for hit in result.results if hit.text == "Yes, last May.")
    assert "context" in reply.channels
    assert "keyword" not in reply.channels


@pytest.mark.parametrize(
    ("turns", "error"),
    [
        ([], "messages is empty. Pass the thread's messages as [{role, content}, ...]."),
        (
            [MessageIn(role="user", content="x")] * 3,
            "3 messages in one call; the limit is 2. "
            "Send the thread in several calls with the same thread_id.",
        ),
    ],
)
async def test_bad_threads_are_refused(make_service: MakeService, turns: list[MessageIn], error: str) -> None:
    harness = await make_service(max_messages=2)

    with pytest.raises(InvalidInputError) as refused:
        await harness.service.remember_thread(SCOPE, ThreadDraft("t1", turns))

    assert str(refused.value) == error


async def test_list_threads_pages_largest_first(harness: Harness) -> None:
    for thread, count in (("small", 1), ("big", 3), ("mid", 2)):
        await harness.service.remember_thread(
            SCOPE, ThreadDraft(thread, messages(*(f"{thread} {i}" for i in range(count))))
        )

    first = await harness.service.list_threads(SCOPE, 2)
    second = await harness.service.list_threads(SCOPE, 2, first.next_offset or 0)

    assert [(t.thread_id, t.memories) for t in first.threads] == [("big", 3), ("mid", 2)]
    assert [(t.thread_id, t.memories) for t in second.threads] == [("small", 1)]
    assert (first.next_offset, second.next_offset) == (2, None)


async def test_forget_a_thread_deletes_its_messages_only(harness: Harness) -> None:
    await harness.service.remember_thread(SCOPE, ThreadDraft("t1", messages("one", "two")))
    await harness.service.remember_thread(SCOPE, ThreadDraft("t2", messages("three")))
    note = await harness.service.create_note(
        SCOPE, NoteDraft(content="A note of t1", type=NoteType.FACT, thread_id="t1")
    )

    result = await harness.service.forget(SCOPE, thread_id="t1")

    assert (result.deleted_memories, result.deleted_notes) == (2, 0)
    assert await harness.count(thread_id="t1") == 1  # the note's copy stays
    assert await harness.count(thread_id="t2") == 1
    assert [n.id for n in await harness.graph.get_notes(SCOPE, [note.id])] == [note.id]


async def test_forget_by_ids_deletes_notes_from_both_stores(harness: Harness) -> None:
    remembered = await harness.service.remember_thread(SCOPE, ThreadDraft("t1", messages("one", "two")))
    note = await harness.service.create_note(SCOPE, NoteDraft(content="Forget me", type=NoteType.FACT))

    result = await harness.service.forget(SCOPE, ids=[note.id, remembered.memory_ids[0]])

    assert (result.deleted_memories, result.deleted_notes) == (2, 1)
    assert result.ids == [note.id, remembered.memory_ids[0]]
    assert await harness.graph.get_notes(SCOPE, [note.id]) == []
    assert await harness.count() == 1


async def test_forget_needs_something_to_forget(harness: Harness) -> None:
    with pytest.raises(InvalidInputError) as refused:
        await harness.service.forget(SCOPE)

    assert str(refused.value) == "Pass ids (memory or note ids from recall_memory) or a thread_id to forget."


async def test_forget_of_unknown_ids_says_so(harness: Harness) -> None:
    with pytest.raises(NotFoundError) as refused:
        await harness.service.forget(SCOPE, ids=["nope"])

    assert str(refused.value) == (
        "Nothing to forget: no memory or note 'nope' in this project. "
        "recall_memory returns the ids you can forget."
    )


async def test_kinds_are_kept_apart(harness: Harness) -> None:
    await harness.service.remember_thread(SCOPE, ThreadDraft("t1", messages("one")))
    await harness.service.create_note(SCOPE, NoteDraft(content="A fact", type=NoteType.FACT))

    assert await harness.count(kinds=[MemoryKind.MESSAGE]) == 1
    assert await harness.count(kinds=[MemoryKind.NOTE]) == 1


async def test_forget_a_project_deletes_its_memories_notes_and_links_and_nothing_of_another(
    harness: Harness,
) -> None:
    other = SCOPE.model_copy(update={"project": "other"})
    for scope in (SCOPE, other):
        await harness.service.remember_thread(scope, ThreadDraft("t1", messages("one", "two")))
        first = await harness.service.create_note(scope, NoteDraft(content="Port 8080", type=NoteType.FACT))
        second = await harness.service.create_note(
            scope, NoteDraft(content="Use TLS", type=NoteType.DECISION)
        )
        await harness.service.create_link(
            scope, from_id=first.id, to_id=second.id, relation=Relation.SUPPORTS
        )

    result = await harness.service.forget_project(SCOPE)

    assert (result.deleted_memories, result.deleted_notes) == (4, 2)  # two messages, two notes' copies
    assert await harness.count() == 0
    assert await harness.graph.list_notes(NoteFilter(scope=SCOPE), 10) == []
    assert await harness.graph.list_links(SCOPE, 10) == []
    assert await harness.vectors.count(MemoryFilter(scope=other)) == 4
    assert len(await harness.graph.list_notes(NoteFilter(scope=other), 10)) == 2
    assert len(await harness.graph.list_links(other, 10)) == 1
