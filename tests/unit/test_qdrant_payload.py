"""A memory survives the trip through a Qdrant payload, whichever way the payload is read back."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest
from pydantic import ValidationError

from hybrid_memory.backends import _qdrant_common as common
from hybrid_memory.models import Memory, MemoryKind, NoteType

ID = "6f1c1a52-7c1e-4d0e-9c43-2f1e0b6f7a10"


def full_memory() -> Memory:
    paris = timezone(timedelta(hours=2))
    return Memory(
        id=ID,
        kind=MemoryKind.NOTE,
        text="Ana prefers tea.",
        project="p",
        user="u",
        thread_id="t",
        message_id="m",
        role="user",
        chunk_index=1,
        chunk_count=2,
        note_type=NoteType.PREFERENCE,
        tags=["drinks", "ana"],
        importance=0.7,
        created_at=datetime(2024, 5, 1, 14, 0, tzinfo=paris),
        valid_from=datetime(2024, 5, 1, 12, 0, tzinfo=UTC),
        valid_to=None,
        source="create_note",
        tokens=5,
        pinned=True,
        private=False,
        expires_at=datetime(2025, 1, 1, tzinfo=UTC),
        last_accessed_at=None,
        replaces=["a", "b"],
        replaced_count=2,
        prev_id="p1",
        next_id=None,
    )


def test_a_stored_payload_reads_back_as_the_same_memory_as_validation_gives() -> None:
    memory = full_memory()
    payload = common.memory_to_payload(memory)

    read = common.payload_to_memory(ID, payload)

    assert read == memory == Memory.model_validate({**payload, "id": ID})
    assert read.created_at.tzinfo is UTC
    assert read.model_fields_set == Memory.model_validate({**payload, "id": ID}).model_fields_set


def test_a_payload_of_an_older_shape_is_validated_with_defaults() -> None:
    payload = {"kind": "message", "text": "hi", "project": "p", "created_at": "2024-05-01T12:00:00"}

    read = common.payload_to_memory(ID, payload)

    assert read == Memory(id=ID, kind=MemoryKind.MESSAGE, text="hi", project="p", created_at=read.created_at)
    assert read.created_at == datetime(2024, 5, 1, 12, 0, tzinfo=UTC)


def test_a_payload_with_a_wrong_value_is_refused_by_validation() -> None:
    payload = {**common.memory_to_payload(full_memory()), "tokens": "many"}

    with pytest.raises(ValidationError, match="tokens"):
        common.payload_to_memory(ID, payload)


@pytest.mark.parametrize("given", [ID, ID.upper(), ID.replace("-", ""), "{" + ID + "}", "urn:uuid:" + ID])
def test_an_id_in_any_form_of_a_uuid_names_the_point_of_its_canonical_form(given: str) -> None:
    assert common.point_id(given) == ID


@pytest.mark.parametrize("given", [ID + " ", ID[:-1], ID[:-1] + "g", "not-an-id", ""])
def test_an_id_that_is_no_uuid_names_no_point(given: str) -> None:
    assert common.point_id(given) is None
