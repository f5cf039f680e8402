"""Which note replaced a note that is no longer valid, read from the links that closed it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from hybrid_memory.backends.base import GraphStore
from hybrid_memory.models import Link, Note, Relation, Scope, Walk

CLOSING_RELATIONS = frozenset({Relation.CONTRADICTS, Relation.SUPERSEDES})
"""Links of these kinds say the target is no longer true: the older note's validity ends."""


def successor(note_id: str, since: datetime, links: Iterable[Link], notes: Sequence[Note]) -> str | None:
    """The newest note that supersedes the note or contradicts it, among ``links``; None if none does.

    "A supersedes B" closes B; "A contradicts B" closes the older of the two, so the
    other end of a contradiction counts only when it is not older than the note
    (created at ``since``).
    """
    created = {nt.id: nt.created for nt in notes}
    found: list[str] = []
    for lk in links:
        if lk.relation is Relation.SUPERSEDES and lk.to_id == note_id:
            found.append(lk.from_id)
        elif lk.relation is Relation.CONTRADICTS and note_id in (lk.from_id, lk.to_id):
            other = lk.to_id if lk.from_id == note_id else lk.from_id
            if created.get(other, since) >= since:
                found.append(other)
    return max(found, key=lambda i: (created.get(i, since), i)) if found else None


async def successors(
    graph: GraphStore, scope: Scope, closed: Iterable[tuple[str, datetime]]
) -> dict[str, str]:
    """For each closed note (id, created), the id of the note that replaced it, if one did."""
    out: dict[str, str] = {}
    for note_id, since in closed:
        walk = Walk(note_id=note_id, relations=sorted(CLOSING_RELATIONS), limit=50)
        hood = await graph.neighbourhood(scope, walk)
        found = successor(note_id, since, hood.links, hood.notes)
        if found is not None:
            out[note_id] = found
    return out
