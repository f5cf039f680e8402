"""Walking every page of a vector-store scroll."""

from __future__ import annotations

from collections.abc import AsyncIterator

from hybrid_memory.backends.base import VectorStore
from hybrid_memory.models import Memory, MemoryFilter

PAGE = 256


async def pages(vectors: VectorStore, flt: MemoryFilter) -> AsyncIterator[list[Memory]]:
    """Each page of the memories matching ``flt``, until the store says there are no more."""
    offset: str | None = None
    while True:
        page, offset = await vectors.scroll(flt, PAGE, offset)
        yield page
        if offset is None:
            return


async def every(vectors: VectorStore, flt: MemoryFilter) -> list[Memory]:
    """All the memories matching ``flt``, read a page at a time."""
    return [m async for page in pages(vectors, flt) for m in page]
