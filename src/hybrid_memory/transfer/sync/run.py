"""``hybrid-memory sync <remote>``: one exchange with a remote, in steps that each record themselves.

1. Bring the remote level (a clone's fetch, or the folder itself).
2. Record this machine's own change files that a sync cut off after its push never recorded.
3. Name the store's projects for the remote, and move what waited under a repository's name
   into the repository's project when this machine now has it.
4. Scan the stores for what changed since the last sync (:mod:`.changes`).
5. Apply the other machines' new change files, by the conflict rule (:mod:`.apply`); record.
6. Write what is left of this machine's changes as its next change file; push; record.

A sync stopped anywhere loses nothing: what was not recorded is done again by the next one,
and doing it again changes nothing that was done.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
from pydantic import BaseModel

from hybrid_memory.errors import StoreLockedError
from hybrid_memory.models import Scope
from hybrid_memory.service import MemoryService
from hybrid_memory.transfer.sync.apply import apply, resolve
from hybrid_memory.transfer.sync.changes import (
    Changes,
    fingerprint,
    local_changes,
    merge,
    read_changes,
    render,
)
from hybrid_memory.transfer.sync.identity import local_projects
from hybrid_memory.transfer.sync.remote import ChangeFile, change_files, open_remote, remote_key
from hybrid_memory.transfer.sync.state import SyncState, machine_id


class SyncResult(BaseModel):
    remote: str
    machine: str
    sent: dict[str, int]
    """Items per kind (and ``forget``) in the change file this sync wrote; all 0 when none."""
    received: dict[str, int]
    """Items per kind the other machines' files brought that were written here (not already held)."""
    forgotten_here: int
    files_applied: int

    def line(self) -> str:
        sent, got = self.sent, self.received
        return (
            f"synced with {self.remote}: sent {sent['memory']} memories, {sent['note']} notes, "
            f"{sent['link']} links, {sent['forget']} forgets; received {self.files_applied} change files: "
            f"{got['memory']} memories, {got['note']} notes, {got['link']} links written, "
            f"{self.forgotten_here} items forgotten\n"
        )


async def sync(service: MemoryService, remote: str, *, data_dir: Path, cwd: str | None) -> SyncResult:
    """Exchange changes with ``remote`` (a folder or a git repository); see the module's steps."""
    sync_dir = data_dir / "sync"
    me = await anyio.to_thread.run_sync(machine_id, sync_dir)
    workdir = sync_dir / remote_key(remote)
    endpoint = open_remote(remote, workdir)
    with _one_at_a_time(workdir, remote):
        state = SyncState(workdir / "state.sqlite")
        try:
            root = await endpoint.pull()
            files = await anyio.to_thread.run_sync(change_files, root)
            applied = state.applied()
            _record_own(state, [f for f in files if f.machine == me and f.seq > applied.get(me, 0)])
            shared = await _names(service, state, cwd)
            local = await local_changes(service, state.synced(), shared.shared)
            incoming, last = Changes(), dict[str, int]()
            for file in files:
                if file.machine != me and file.seq > applied.get(file.machine, 0):
                    merge(incoming, await anyio.to_thread.run_sync(read_changes, file.path))
                    last[file.machine] = file.seq
            resolve(incoming, local)
            done = await apply(service, incoming, shared.local)
            with state.transaction():
                state.agree(done.agreed, done.forgotten)
                for machine, seq in last.items():
                    state.set_applied(machine, seq)
            sent = local.counts()
            if local:
                seq = max([f.seq for f in files if f.machine == me] + [applied.get(me, 0)]) + 1
                await endpoint.publish(me, seq, render(me, seq, local))
                with state.transaction():
                    state.agree(((k, fingerprint(i)) for k, i in local.items.items()), local.forgotten)
                    state.set_applied(me, seq)
        finally:
            state.close()
    return SyncResult(
        remote=remote,
        machine=me,
        sent=sent,
        received=done.written,
        forgotten_here=done.deleted,
        files_applied=sum(1 for f in files if f.machine != me and f.seq > applied.get(f.machine, 0)),
    )


def _record_own(state: SyncState, files: list[ChangeFile]) -> None:
    """This machine's files on the remote that it never recorded: pushed, then cut off."""
    for file in files:
        changes = read_changes(file.path)
        with state.transaction():
            state.agree(((k, fingerprint(i)) for k, i in changes.items.items()), changes.forgotten)
            state.set_applied(file.machine, file.seq)


class _Names:
    """Local project <-> shared name, for this sync."""

    def __init__(self, recorded: dict[str, str], local: dict[str, str]) -> None:
        self._recorded = recorded
        self._local = local

    def shared(self, project: str) -> str:
        return self._recorded.get(project, project)

    def local(self, shared: str) -> str:
        return self._local.get(shared, shared)


async def _names(service: MemoryService, state: SyncState, cwd: str | None) -> _Names:
    stores = service.stores
    scopes = set(await stores.graph.scopes()) | set(await stores.vectors.scopes())
    projects = sorted({s.project for s in scopes})
    recorded = state.names()
    here = await anyio.to_thread.run_sync(local_projects, projects, cwd)
    with state.transaction():
        for name, project in here.items():
            if name != project and recorded.get(project) != name:
                state.name(project, name)  # a repository's name is kept once seen (its folder may go)
                recorded[project] = name
    local = {recorded.get(p, p): p for p in projects} | {n: p for n, p in here.items() if n != p}
    # What arrived before this machine had the repository waits under its name: move it in.
    for scope in sorted(scopes, key=lambda s: (s.project, s.user)):
        into = local.get(scope.project, scope.project)
        if into != scope.project and not await anyio.Path(scope.project).is_dir():
            await service.move_project(Scope(project=scope.project, user=scope.user), into)
    return _Names(recorded, local)


@contextmanager
def _one_at_a_time(workdir: Path, remote: str) -> Iterator[None]:
    workdir.mkdir(parents=True, exist_ok=True)
    fd = os.open(workdir / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise StoreLockedError(
                f"A sync with {remote} is already running on this data dir; wait for it to end."
            ) from None
        yield
    finally:
        os.close(fd)
