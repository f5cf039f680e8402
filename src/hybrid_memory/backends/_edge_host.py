"""The Qdrant Edge shard of an embedded vector store: lock, calls, durability, background work."""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import TypeVar

import anyio
import anyio.to_thread
import qdrant_edge as qe

from hybrid_memory.backends import _qdrant_common as common
from hybrid_memory.backends._edge_layout import (
    clear_interrupted_builds,
    edge_config,
    load_shard,
    payload_indexes,
)
from hybrid_memory.backends._process_memory import (
    limit_malloc_arenas,
    release_freed_memory,
    release_mapped_pages,
)
from hybrid_memory.backends._store_dir import IDENTITY_FILE, lock_directory, read_identity, write_identity
from hybrid_memory.backends._wal_sync import WalSync
from hybrid_memory.errors import (
    BackendError,
    BackendUnavailableError,
    ConflictError,
    HybridMemoryError,
)

logger = logging.getLogger(__name__)

T = TypeVar("T")

SHARD_DIR = "shard"
SEGMENTS_DIR = "segments"
TEMP_SEGMENTS_DIR = "temp_segments"
"""Where Edge builds a segment during an optimize; what a finished build leaves there it moves out."""
OPTIMIZE_AFTER_POINTS = 1000
OPTIMIZE_IDLE_S = 2.0
OPEN_QUIET_S = 10.0
"""What the last run left to build waits this long after open: a session's first calls come first."""
OPTIMIZE_UNDER_LOAD_S = 60.0
"""A store written to without a pause builds its index anyway once it has waited this long."""
CHECKPOINT_EVERY_S = 30.0
"""Edge's full flush runs when the store is idle, and at least this often under steady writes."""


RELEASE_AFTER_POINTS = 5000
"""Written points after which the store's file pages are let go during a long ingest."""


class EdgeHost:
    """One open Qdrant Edge shard in ``path``: its directory lock, one call at a time, durable
    acknowledgements, and the background optimize and checkpoint.

    ``timeout_s`` bounds how long a call waits for the shard while another call
    (typically a background index build) holds it.
    """

    def __init__(self, path: Path, *, timeout_s: float = 10.0) -> None:
        self._path = Path(path)
        self._timeout_s = timeout_s
        self._shard: qe.EdgeShard | None = None
        self._lock_fd: int | None = None
        self._lock = threading.Lock()  # one Edge call at a time
        self._wake = threading.Condition()  # guards the optimizer's state below
        self._pending = 0  # points written since the last optimize
        self._due_since = 0.0  # when the pending points last reached OPTIMIZE_AFTER_POINTS (or a build ended)
        self._unflushed = False  # written since Edge's last full flush (durable through the WAL sync)
        self._checkpointed = 0.0
        self._unreleased = 0  # points written since the store's file pages were last let go
        self._wal = WalSync(self._path / SHARD_DIR / "wal")
        self._segments = self._path / SHARD_DIR / SEGMENTS_DIR
        self._stopping = False
        self._last_call = 0.0
        self._in_flight = 0  # requests being served (in_use): the store is not idle while any is
        self._optimizer: threading.Thread | None = None

    # --- lifecycle --------------------------------------------------------------------------------

    async def open(self, *, dimension: int, model: str) -> None:
        """Open or create the store; take the directory lock; start the background optimizer.

        Raises ``StoreLockedError`` when another process owns the directory and
        ``ConflictError`` when another model or dimension filled the store.
        """
        if self._shard is not None:
            raise RuntimeError("the memory store is already open")
        with anyio.CancelScope(shield=True):  # half an open would hold the lock with no one to close it
            await anyio.to_thread.run_sync(self._open_sync, common.StoreIdentity(model, dimension))
        # The state of the shard left by the last run is unknown: check it at the first idle moment.
        self._pending = OPTIMIZE_AFTER_POINTS
        self._stopping = False
        self._checkpointed = self._due_since = time.monotonic()
        # Seen as a call ending then: the first idle moment comes OPEN_QUIET_S after open at the earliest.
        self._last_call = self._checkpointed + OPEN_QUIET_S - OPTIMIZE_IDLE_S
        self._optimizer = threading.Thread(target=self._optimize_loop, name="edge-optimizer", daemon=True)
        self._optimizer.start()

    async def close(self) -> None:
        """Stop the optimizer (waiting out a running index build), flush, unlock.

        Nothing is optimized here: a client that closes the server expects it gone at once,
        and a build cut short by its kill would be lost work and debris. What is pending is
        built at the next start's first idle moment.
        """
        if self._shard is None:
            return
        # Shielded: a close cut short would leave the shard open and the directory locked.
        with anyio.CancelScope(shield=True):
            with self._wake:
                self._stopping = True
                self._wake.notify_all()
            if self._optimizer is not None:
                await anyio.to_thread.run_sync(self._optimizer.join)
                self._optimizer = None
            await anyio.to_thread.run_sync(self._close_sync)

    def _open_sync(self, wanted: common.StoreIdentity) -> None:
        limit_malloc_arenas()  # before Edge starts its threads
        self._path.mkdir(parents=True, exist_ok=True)
        lock_fd = lock_directory(self._path)
        shard: qe.EdgeShard | None = None
        try:
            clear_interrupted_builds(self._path / SHARD_DIR / TEMP_SEGMENTS_DIR)
            shard = self._load_or_create(wanted)
            existing = shard.info().payload_schema
            for name, schema in payload_indexes():
                if name not in existing:
                    shard.update(qe.UpdateOperation.create_field_index(name, schema))
            shard.flush()
        except BaseException as exc:
            if shard is not None:
                with contextlib.suppress(Exception):
                    shard.close()
            os.close(lock_fd)  # releases the flock
            if isinstance(exc, HybridMemoryError) or not isinstance(exc, Exception):
                raise
            raise BackendError(f"Could not open the memory store at {self._path}: {exc}") from exc
        self._shard, self._lock_fd = shard, lock_fd

    def _load_or_create(self, wanted: common.StoreIdentity) -> qe.EdgeShard:
        identity_path, shard_path = self._path / IDENTITY_FILE, self._path / SHARD_DIR
        stored = read_identity(identity_path)
        if stored is not None:
            elsewhere = "set HYBRID_MEMORY_DATA_DIR to another directory"
            common.check_identity(stored, wanted, store=f"at {self._path}", elsewhere=elsewhere)
        config = edge_config(wanted.dimension)
        if not (shard_path.is_dir() and any(shard_path.iterdir())):
            if stored is None:  # written before the shard, so no shard is ever without one
                write_identity(identity_path, wanted)
            return qe.EdgeShard.create(str(shard_path), config)
        # Loading with our config makes Edge check that the stored vectors fit it.
        try:
            shard = load_shard(shard_path, wanted.dimension)
        except Exception as exc:
            if "incompatible" not in str(exc):
                raise
            detail = str(exc).splitlines()[0][:200]
            raise ConflictError(
                f"The memory store at {self._path} was made with other vector settings than this version "
                f"of hybrid-memory uses ({detail}). Export it with the version that made it "
                "(`hybrid-memory export FILE`), then import the file here, or set HYBRID_MEMORY_DATA_DIR "
                "to another directory."
            ) from exc
        if stored is None:
            logger.warning("memory store at %s had no %s; recording %s", self._path, IDENTITY_FILE, wanted)
            write_identity(identity_path, wanted)
        return shard

    def _close_sync(self) -> None:
        with self._lock:
            shard, self._shard = self._shard, None
            try:
                if shard is not None:
                    try:
                        shard.flush()
                    finally:
                        shard.close()
            except Exception as exc:
                raise BackendError(f"Closing the memory store at {self._path} failed: {exc}") from exc
            finally:
                if self._lock_fd is not None:
                    os.close(self._lock_fd)
                    self._lock_fd = None

    @contextlib.contextmanager
    def in_use(self) -> Iterator[None]:
        """Held while a request is served: an idle-time build waits until none is."""
        with self._wake:
            self._in_flight += 1
        try:
            yield
        finally:
            with self._wake:
                self._in_flight -= 1
                self._last_call = max(self._last_call, time.monotonic())
                self._wake.notify_all()

    # --- every Edge call goes through here --------------------------------------------------------

    def _locked(self, fn: Callable[[qe.EdgeShard], T], *, wait_s: float | None) -> T:
        if not self._lock.acquire(timeout=-1 if wait_s is None else wait_s):
            raise BackendUnavailableError(
                f"The memory store at {self._path} is busy (building its search index) and did not "
                f"answer within {wait_s:g}s; try again shortly."
            )
        return self._holding(fn)

    def _holding(self, fn: Callable[[qe.EdgeShard], T]) -> T:
        """Call ``fn`` with the store's lock held by the caller; the lock is released on return."""
        try:
            if self._shard is None:
                raise BackendError(f"The memory store at {self._path} is closed.")
            return fn(self._shard)
        except (HybridMemoryError, KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # Edge's Rust panics arrive as BaseException
            raise BackendError(f"The memory store at {self._path} failed: {exc}") from exc
        finally:
            self._last_call = time.monotonic()
            self._lock.release()

    async def run(self, fn: Callable[[qe.EdgeShard], T]) -> T:
        if self._shard is None:
            raise RuntimeError("the memory store is not open; call open() first")
        return await anyio.to_thread.run_sync(partial(self._locked, fn, wait_s=self._timeout_s))

    async def read(self, fn: Callable[[qe.EdgeShard], T]) -> T:
        """``run`` for a short read: in this thread when the store is free (Edge holds the GIL while it
        works, so a worker thread would not free the loop, and the hop to it and back costs more than a
        search), else through a worker thread, waiting there for the store."""
        if self._shard is None:
            raise RuntimeError("the memory store is not open; call open() first")
        if self._lock.acquire(blocking=False):
            return self._holding(fn)
        return await self.run(fn)

    # --- background optimize ----------------------------------------------------------------------

    async def durable(self, points: int) -> None:
        """After an update: wait for its WAL sync (off the loop, GIL released), wake the optimizer."""
        await anyio.to_thread.run_sync(self._wal.commit)
        with self._wake:
            if self._pending < OPTIMIZE_AFTER_POINTS <= self._pending + points:
                self._due_since = time.monotonic()
            self._pending += points
            self._unflushed = True
            self._unreleased += points
            release = self._unreleased >= RELEASE_AFTER_POINTS
            if release:
                self._unreleased = 0
            self._wake.notify_all()
        if release:
            await anyio.to_thread.run_sync(self._release_if_free)

    def _optimize_loop(self) -> None:
        while True:
            with self._wake:
                while not self._stopping:
                    due = self._pending >= OPTIMIZE_AFTER_POINTS
                    if not due and not self._unflushed:
                        self._wake.wait()
                        continue
                    now = time.monotonic()
                    idle_left = (
                        OPTIMIZE_IDLE_S if self._in_flight else self._last_call + OPTIMIZE_IDLE_S - now
                    )
                    # Under steady load the store is never idle: checkpoint and build now and then anyway.
                    checkpoint_in = (
                        self._checkpointed + CHECKPOINT_EVERY_S - now if self._unflushed else idle_left
                    )
                    build_in = self._due_since + OPTIMIZE_UNDER_LOAD_S - now if due else idle_left
                    wait = min(idle_left, checkpoint_in, build_in)
                    if wait <= 0:
                        break
                    self._wake.wait(wait)
                if self._stopping:
                    return
                now = time.monotonic()
                idle = not self._in_flight and self._last_call + OPTIMIZE_IDLE_S <= now
                build = self._pending >= OPTIMIZE_AFTER_POINTS and (
                    idle or self._due_since + OPTIMIZE_UNDER_LOAD_S <= now
                )
            try:
                if build:
                    self._optimize_sync(wait_s=None)
                if self._unflushed:
                    self._checkpoint_sync()
            except HybridMemoryError:
                logger.exception("background work on the memory store at %s failed", self._path)

    def _checkpoint_sync(self) -> None:
        """Edge's full flush, when idle: writes are durable without it, but it lets Edge trim its log."""
        with self._wake:
            self._unflushed = False
            self._checkpointed = time.monotonic()
        self._locked(lambda shard: shard.flush(), wait_s=None)

    def _release(self, _shard: qe.EdgeShard) -> None:
        """Let go of the store's file pages (:func:`release_mapped_pages`); called with the lock held."""
        release_mapped_pages(self._segments)

    def _release_if_free(self) -> None:
        """:meth:`_release` unless a call (a build) holds the store: it lets go when it ends."""
        if not self._lock.acquire(blocking=False):
            return
        try:
            if self._shard is not None:
                self._release(self._shard)
        finally:
            self._lock.release()

    def _optimize_sync(self, *, wait_s: float | None) -> bool:
        with self._wake:
            pending = self._pending
        started = time.monotonic()
        try:
            changed = self._locked(self._build, wait_s=wait_s)
        finally:
            with self._wake:  # points written meanwhile stay pending; a failure waits for new ones
                self._pending = max(0, self._pending - pending)
                self._due_since = time.monotonic()
        if changed:
            release_freed_memory()
            logger.info("optimized the memory store at %s in %.1fs", self._path, time.monotonic() - started)
        return changed

    def _build(self, shard: qe.EdgeShard) -> bool:
        """Edge's optimize, the pages it maps let go before and after: a build reads every segment it
        merges, and what the process holds at its peak is then what is resident plus that one build."""
        self._release(shard)
        try:
            return shard.optimize()
        finally:
            self._release(shard)

    async def optimize(self) -> bool:
        """Build the indexes that are due now (the store waits meanwhile); True when anything changed."""
        if self._shard is None:
            raise RuntimeError("the memory store is not open; call open() first")
        return await anyio.to_thread.run_sync(partial(self._optimize_sync, wait_s=self._timeout_s))
