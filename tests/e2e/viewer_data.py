"""A small memory for the viewer's tests: two threads and two linked notes in project ``e2e``."""

from __future__ import annotations

from pathlib import Path

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.models import MessageIn, NoteType, Relation, Scope
from hybrid_memory.server.app import open_app
from hybrid_memory.service import NoteDraft, ThreadDraft
from tests.conftest import make_settings

SCOPE = Scope(project="e2e")
TRIP = [
    MessageIn(role="user", content="We fly to Lisbon on May 3rd to see my sister Alice.", id="m1"),
    MessageIn(role="assistant", content="Noted: the Lisbon trip is on May 3rd.", id="m2"),
]
TEA = [MessageIn(role="user", content="I only drink green tea after lunch.", id="m1")]


async def seed(data_dir: Path, embedder: Embedder) -> dict[str, str]:
    """Fill ``data_dir`` and return the ids the tests look for."""
    async with open_app(make_settings(data_dir), embedder) as app:
        service = app.service
        trip = await service.remember_thread(SCOPE, ThreadDraft("trip", TRIP))
        await service.remember_thread(SCOPE, ThreadDraft("tea", TEA))
        sister = await service.create_note(
            SCOPE, NoteDraft(content="Alice is the user's sister", type=NoteType.CONCEPT)
        )
        lives = await service.create_note(
            SCOPE,
            NoteDraft(
                content="Alice lives in Lisbon", type=NoteType.FACT, tags=[f"src:{trip.memory_ids[0]}"]
            ),
        )
        await service.create_link(SCOPE, from_id=lives.id, to_id=sister.id, relation=Relation.PART_OF)
    return {"asked": trip.memory_ids[0], "answered": trip.memory_ids[1], "lives": lives.id}
