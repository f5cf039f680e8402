"""Pydantic models shared by every layer; one import path for all of them.

``domain``: what is stored (scopes, memories, notes, links, filters). ``results``: what the
use cases take and give. ``housekeeping``: what pins, context, limits, stats and tasks return.

The names load on first use, each from its module: the server's handshake needs only
``domain`` (a scope), not every result model.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hybrid_memory.models.domain import (
        CodeState,
        Direction,
        Link,
        Liveness,
        Memory,
        MemoryFilter,
        MemoryKind,
        MemoryRecord,
        Neighbourhood,
        Note,
        NoteFilter,
        NoteHit,
        NoteType,
        Relation,
        Scope,
        Searches,
        SparseVector,
        ToolUse,
        VectorHit,
        Walk,
        utcnow,
    )
    from hybrid_memory.models.housekeeping import (
        CleanupResult,
        ContextItem,
        ForgetPreview,
        KindStats,
        LimitsInfo,
        MemoryContext,
        MemoryStats,
        PinResult,
        PreviewItem,
        TaskResult,
    )
    from hybrid_memory.models.results import (
        AdjacentTurn,
        ContentBlock,
        ForgetResult,
        MemoryPage,
        MessageIn,
        NoteResult,
        RecallHit,
        RecallResult,
        RememberResult,
        ThreadInfo,
        ThreadList,
    )

_MODULES = ("domain", "housekeeping", "results")
"""Where the names come from, the handshake's first: a name is taken from the first that has it."""

__all__ = [
    "AdjacentTurn",
    "CleanupResult",
    "CodeState",
    "ContentBlock",
    "ContextItem",
    "Direction",
    "ForgetPreview",
    "ForgetResult",
    "KindStats",
    "LimitsInfo",
    "Link",
    "Liveness",
    "Memory",
    "MemoryContext",
    "MemoryFilter",
    "MemoryKind",
    "MemoryPage",
    "MemoryRecord",
    "MemoryStats",
    "MessageIn",
    "Neighbourhood",
    "Note",
    "NoteFilter",
    "NoteHit",
    "NoteResult",
    "NoteType",
    "PinResult",
    "PreviewItem",
    "RecallHit",
    "RecallResult",
    "Relation",
    "RememberResult",
    "Scope",
    "Searches",
    "SparseVector",
    "TaskResult",
    "ThreadInfo",
    "ThreadList",
    "ToolUse",
    "VectorHit",
    "Walk",
    "utcnow",
]


def __getattr__(name: str) -> Any:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    for module in _MODULES:
        found = importlib.import_module(f"{__name__}.{module}")
        if hasattr(found, name):
            value = getattr(found, name)
            globals()[name] = value  # looked up once
            return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
