"""The SDK's wrapper class for resolved tool parameters is built once, not once a call."""

from __future__ import annotations

import gc
import weakref

from mcp.server.mcpserver.resolve import _accepted  # what the SDK calls for every resolved parameter

from hybrid_memory.tools import _common


def test_the_resolved_outcome_class_survives_garbage_collection() -> None:
    outcome_class = weakref.ref(type(_accepted("a scope")))
    gc.collect(0)
    gc.collect()

    assert outcome_class() is _common.RESOLVED_OUTCOME
    assert type(_accepted("another")) is _common.RESOLVED_OUTCOME
