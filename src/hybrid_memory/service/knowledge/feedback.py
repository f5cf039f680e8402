"""rate_memory: the agent's feedback moves a memory in recall through fields recall already weighs.

- useful: importance up by USEFUL_STEP (from the default when unset), at most 1.
- wrong: importance 0 and validity closed now, so recall hides it (include_invalid shows it):
  serving a memory the user called wrong does more harm than missing it.
- outdated: validity closed now; importance kept (it was true once, as_of still finds it).
"""

from __future__ import annotations

from datetime import datetime

from hybrid_memory.backends.base import GraphStore, VectorStore
from hybrid_memory.errors import NotFoundError
from hybrid_memory.models import MemoryKind, Scope
from hybrid_memory.models.knowledge import RateResult, Rating
from hybrid_memory.service.recall.ranking import DEFAULT_IMPORTANCE

USEFUL_STEP = 0.2


def rated_fields(
    rating: Rating, importance: float | None, valid_to: datetime | None, now: datetime
) -> dict[str, object]:
    """The fields a rating changes."""
    closed = valid_to if valid_to is not None and valid_to <= now else now
    if rating is Rating.USEFUL:
        base = DEFAULT_IMPORTANCE if importance is None else importance
        return {"importance": round(min(1.0, base + USEFUL_STEP), 6)}
    if rating is Rating.WRONG:
        return {"importance": 0.0, "valid_to": closed}
    return {"valid_to": closed}


async def rate(
    vectors: VectorStore, graph: GraphStore, scope: Scope, memory_id: str, rating: Rating, now: datetime
) -> RateResult:
    """Apply ``rating`` to a memory or note (both copies of a note)."""
    memories = await vectors.get(scope, [memory_id])
    notes = await graph.get_notes(scope, [memory_id])
    if not memories and not notes:
        raise NotFoundError(
            f"No memory or note '{memory_id}' in this project. recall_memory returns the ids you can rate."
        )
    if notes:
        note = notes[0]
        fields = rated_fields(rating, note.importance, note.valid_to, now)
        await graph.upsert_note(note.model_copy(update={**fields, "modified": now}))
    else:
        fields = rated_fields(rating, memories[0].importance, memories[0].valid_to, now)
    if memories:
        await vectors.set_payload(scope, memory_id, fields)
    current = memories[0] if memories else None
    kind = current.kind if current is not None else MemoryKind.NOTE
    importance = fields.get("importance", current.importance if current else notes[0].importance)
    valid_to = fields.get("valid_to", current.valid_to if current else notes[0].valid_to)
    return RateResult.model_validate(
        {"id": memory_id, "kind": kind, "rating": rating, "importance": importance, "valid_to": valid_to}
    )
