"""Durable acknowledgements for Qdrant Edge without its ``flush``: group commit of the WAL files.

Edge's ``flush`` msyncs the write-ahead log *and* fsyncs every segment file, holding
the GIL throughout: 80-240 ms here per write, during which the whole process (event
loop, every other request) stands still. Durability needs only the log: an update is
in the WAL's memory map when ``update`` returns (0.3 ms), and after a crash Edge
replays the WAL into the segments. On Linux ``fsync`` of a file also writes back the
pages dirtied through a shared memory map, and ``os.fsync`` releases the GIL: 7 ms.

Writers that finish their update while a sync runs share the next one (group commit):
each waits only for a sync that *started* after its update, so acknowledged still
means on disk. Edge's full ``flush`` (the checkpoint that lets it trim the log) runs
in the background when the store is idle, and on close.
"""

from __future__ import annotations

import os
import threading
from pathlib import Path

from hybrid_memory.errors import BackendError


class WalSync:
    """Makes every update applied before :meth:`commit` was called durable before it returns."""

    def __init__(self, wal_dir: Path) -> None:
        self._wal_dir = wal_dir
        self._cond = threading.Condition()
        self._requested = 0
        self._done = 0
        self._syncing = False

    def commit(self) -> None:
        """Block until a WAL sync that started after this call has finished (in a worker thread)."""
        with self._cond:
            self._requested += 1
            ticket = self._requested
            while self._done < ticket:
                if self._syncing:
                    self._cond.wait()
                    continue
                self._syncing, target = True, self._requested
                try:
                    self._cond.release()
                    try:
                        self._sync_files()
                    finally:
                        self._cond.acquire()
                finally:
                    self._syncing = False
                    self._cond.notify_all()
                self._done = max(self._done, target)

    def _sync_files(self) -> None:
        try:
            # The WAL makes its next segment on a thread of its own (tmp-open-N, renamed open-N;
            # a full one is renamed closed-N, a retired one removed), so a listed file may be
            # gone when it is opened: list again until every file listed was synced.
            for _ in range(5):
                vanished = False
                for name in os.listdir(self._wal_dir):
                    if name.startswith("tmp-"):  # holds no entry yet
                        continue
                    try:
                        _fsync(self._wal_dir / name)
                    except FileNotFoundError:
                        vanished = True
                if not vanished:
                    break
            _fsync(self._wal_dir)  # a log segment created since the last sync
        except OSError as exc:
            raise BackendError(
                f"Could not make the memory store's log at {self._wal_dir} durable: {exc}"
            ) from exc


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
