"""The use cases of the memory server, over the storage protocols and the embedder.

The names below load on first use: a submodule such as :mod:`.progress` can be
imported without pulling in the stores, the ranker and the embedding providers.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hybrid_memory.service.memory_service import MemoryService as MemoryService
    from hybrid_memory.service.recall import RecallOptions as RecallOptions
    from hybrid_memory.service.writes.drafts import DryRun as DryRun
    from hybrid_memory.service.writes.drafts import NoteDraft as NoteDraft
    from hybrid_memory.service.writes.drafts import NoteUpdate as NoteUpdate
    from hybrid_memory.service.writes.drafts import TaskDraft as TaskDraft
    from hybrid_memory.service.writes.drafts import ThreadDraft as ThreadDraft
    from hybrid_memory.service.writes.threads import memory_id as memory_id

_EXPORTS = {
    "DryRun": "writes.drafts",
    "NoteDraft": "writes.drafts",
    "NoteUpdate": "writes.drafts",
    "TaskDraft": "writes.drafts",
    "ThreadDraft": "writes.drafts",
    "MemoryService": "memory_service",
    "RecallOptions": "recall",
    "memory_id": "writes.threads",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
