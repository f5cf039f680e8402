"""Reading an embedded store's payload files into the page cache once it opens, in the background.

Qdrant Edge keeps payloads on disk (memory-mapped, ``Memory.Cold``) and drops their pages from
the page cache when it loads a shard. Every payload a recall then reads is a random disk read:
at 100k memories about 0.1 ms each, some 140 of them for a recall's candidates and the turns
around its hits. Reading the files through once, sequentially and off the request path, turns
those into page-cache hits. The page cache is the kernel's: the process's own memory (RSS) grows
only by the pages Edge touches, as it would without this.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
from pathlib import Path

logger = logging.getLogger(__name__)

PREWARM_MAX_BYTES = 512 * 2**20
"""At most this much is read (about 500k memories' payloads); a larger store warms as it is used."""
CHUNK = 2**20


def payload_files(shard: Path) -> list[Path]:
    """The payload storage files of every segment of the shard in ``shard``."""
    return sorted(p for p in shard.glob("segments/*/payload_storage/*") if p.is_file())


def warm(files: list[Path], stop: threading.Event, limit: int = PREWARM_MAX_BYTES) -> int:
    """Read ``files`` through (up to ``limit`` bytes, until ``stop`` is set); the bytes read."""
    done = 0
    for path in files:
        try:
            with path.open("rb", buffering=0) as f:
                while done < limit and not stop.is_set():
                    chunk = f.read(min(CHUNK, limit - done))
                    if not chunk:
                        break
                    done += len(chunk)
        except OSError as exc:  # a segment merged away meanwhile: nothing to warm there
            logger.debug("payload prewarm skipped %s: %s", path, exc)
    return done


def start(shard: Path) -> threading.Event:
    """Warm ``shard``'s payload files on a daemon thread at the lowest priority; set the event to stop."""
    stop = threading.Event()

    def run() -> None:
        with contextlib.suppress(OSError):
            os.nice(19)  # per thread on Linux: the store's own calls come first
        warm(payload_files(shard), stop)

    threading.Thread(target=run, name="edge-payload-prewarm", daemon=True).start()
    return stop
