"""Running counts of what each scope holds, so a write within the limits reads nothing back.

The counts are an upper bound of the memories a full eviction plan would count:
every write adds what it stored (an overwrite counts twice, a delete is not taken
off), and a full plan sets them exactly again. A write whose counts stay within the
limits cannot need an eviction, so only the writes that may need one scan the scope.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from hybrid_memory.models import Memory, Scope


class Limits(Protocol):
    """A scope's limits as the counts read them (the eviction plan's ``Limits``)."""

    @property
    def max_items(self) -> int | None: ...
    @property
    def max_tokens(self) -> int | None: ...
    @property
    def policy(self) -> str: ...
    @property
    def ttl_cutoff(self) -> datetime | None: ...


RESCAN_WRITES = 100
"""Writes of one scope between full scans: other processes sharing a server store write too."""


@dataclass
class Tally:
    items: int = 0
    tokens: int = 0
    oldest: datetime | None = None
    """The oldest creation time of an unpinned memory counted (what the ttl policy evicts)."""

    @classmethod
    def of(cls, memories: Iterable[Memory]) -> Tally:
        tally = cls()
        tally.add(memories)
        return tally

    def add(self, memories: Iterable[Memory]) -> None:
        for m in memories:
            self.items += 1
            self.tokens += m.tokens
            if not m.pinned and (self.oldest is None or m.created_at < self.oldest):
                self.oldest = m.created_at

    def within(self, limits: Limits) -> bool:
        """Whether these counts need no eviction under ``limits`` (see the eviction plan)."""
        if limits.max_items is not None and self.items > limits.max_items:
            return False
        if limits.max_tokens is not None and self.tokens > limits.max_tokens:
            return False
        cutoff = limits.ttl_cutoff if limits.policy == "ttl" else None
        return cutoff is None or self.oldest is None or self.oldest >= cutoff

    def plus(self, other: Tally | None) -> Tally:
        other = other or Tally()
        olds = [t for t in (self.oldest, other.oldest) if t is not None]
        return Tally(self.items + other.items, self.tokens + other.tokens, min(olds) if olds else None)


@dataclass
class _Scope:
    base: Tally | None = None
    """What the last full scan counted; None: not scanned yet, or no longer known."""
    since: Tally | None = None
    """What was written since that scan began."""
    writes: int = 0


class Usage:
    """Per scope: what a full scan counted plus what was written since."""

    def __init__(self) -> None:
        self._scopes: dict[Scope, _Scope] = {}

    def _of(self, scope: Scope) -> _Scope:
        return self._scopes.setdefault(scope, _Scope())

    def added(self, memories: Sequence[Memory]) -> None:
        """Memories were written (new or overwritten)."""
        for m in memories:
            entry = self._of(Scope(project=m.project, user=m.user))
            entry.since = entry.since or Tally()
            entry.since.add([m])
            entry.writes += 1

    def current(self, scope: Scope) -> Tally | None:
        """The upper bound of the scope's counts; None: a full scan is due."""
        entry = self._of(scope)
        if entry.base is None or entry.writes >= RESCAN_WRITES:
            return None
        return entry.base.plus(entry.since)

    def scanning(self, scope: Scope) -> None:
        """A full scan of ``scope`` begins: writes from now on are counted on top of what it finds."""
        entry = self._of(scope)
        entry.since, entry.writes = None, 0

    def scanned(self, scope: Scope, remaining: Iterable[Memory]) -> None:
        """What the scan (and the eviction after it) left in ``scope``."""
        self._of(scope).base = Tally.of(remaining)

    def forget(self, scope: Scope) -> None:
        """The counts are no longer an upper bound (a pin changed what counts): scan next time."""
        self._scopes.pop(scope, None)
