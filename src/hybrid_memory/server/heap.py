"""The garbage collector set for a long-running server; only ``hybrid-memory serve`` asks for it.

A recall allocates thousands of short-lived objects, and CPython's cyclic collector
counts allocations: at its default thresholds (700, 10, 10) it ran 2,600 young and 21
full collections during ``bench/concurrency.py --calls 200``, 3.7 s of the server's
~55 s of CPU, each full one ~120 ms with every request stalled behind it. Objects that
hold no cycle are freed by reference counting anyway, so the collector may run rarely;
and what exists once the stores are open (modules, schemas, the model's session) lives
as long as the process, so it is frozen out of every later collection. With both, the
same run spent 0.23 s in 32 collections.
"""

from __future__ import annotations

import gc

THRESHOLDS = (10_000, 50, 100)
"""Young collections after 10,000 net allocations, full ones rarer still."""


def tune() -> None:
    """Collect rarely: call once, before serving."""
    gc.set_threshold(*THRESHOLDS)


def settle() -> None:
    """Free what start-up left behind in the young generations, then keep everything alive now out of
    later collections.

    Not a full collection: it walks every object of the start-up (0.07 s of CPU) while the first
    request waits, to free a few thousand.
    """
    gc.collect(1)
    gc.freeze()
