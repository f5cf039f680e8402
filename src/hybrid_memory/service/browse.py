"""Reads for a person looking at the memory (the viewer): which projects exist, what came in lately."""

from __future__ import annotations

from datetime import timedelta

from hybrid_memory.backends.base import GraphStore
from hybrid_memory.models import Memory, MemoryFilter, Scope, utcnow
from hybrid_memory.service._pages import every
from hybrid_memory.service.lifecycle.retention import LiveVectors

RECENT_WINDOWS_DAYS = (1, 7, 30, 365)
"""Widened in turn until one holds enough memories: the newest are found without reading them all."""


async def projects(vectors: LiveVectors, graph: GraphStore, user: str) -> list[str]:
    """The projects of ``user`` that hold a memory or a note, by name."""
    scopes = set(await vectors.scopes()) | set(await graph.scopes())
    return sorted({s.project for s in scopes if s.user == user})


async def recent(vectors: LiveVectors, scope: Scope, limit: int) -> list[Memory]:
    """The ``limit`` newest memories of ``scope`` (messages, notes, summaries), newest first."""
    flt = MemoryFilter(scope=scope)
    for days in RECENT_WINDOWS_DAYS:
        window = flt.model_copy(update={"created_after": utcnow() - timedelta(days=days)})
        if await vectors.count(window) >= limit:
            flt = window
            break
    found = await every(vectors, flt)
    return sorted(found, key=lambda m: (m.created_at, m.id), reverse=True)[:limit]
