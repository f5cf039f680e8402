"""A one-line progress bar on stderr for the export and import commands (no dependency needed).

Silent unless stderr is a terminal (a bar in a log file or a pipe is noise) and never
on stdout: the commands print their summary there.
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

_WIDTH = 30
_EVERY_S = 0.1
"""Redraw at most ten times a second: drawing per item would dominate a fast import."""


class Progress:
    """``label [#####-----] done/total`` redrawn in place; ``total=None`` shows a count only."""

    def __init__(self, *, enabled: bool = True, stream: TextIO | None = None) -> None:
        self._stream = stream if stream is not None else sys.stderr
        self._enabled = enabled and self._stream.isatty()
        self._label = ""
        self._total: int | None = None
        self._done = 0
        self._drawn = 0.0

    @classmethod
    def disabled(cls) -> Progress:
        return cls(enabled=False)

    def start(self, label: str, total: int | None) -> None:
        """Begin a phase; ends the previous phase's line."""
        self.finish()
        self._label, self._total, self._done, self._drawn = label, total, 0, 0.0
        self._draw(force=True)

    def advance(self, count: int = 1) -> None:
        self._done += count
        self._draw()

    def finish(self) -> None:
        """Draw the final state and end the line (nothing when no phase is running)."""
        if self._label:
            self._draw(force=True)
            if self._enabled:
                self._stream.write("\n")
                self._stream.flush()
            self._label = ""

    def _draw(self, *, force: bool = False) -> None:
        if not self._enabled:
            return
        now = time.monotonic()
        if not force and now - self._drawn < _EVERY_S:
            return
        self._drawn = now
        if self._total:
            filled = min(_WIDTH, _WIDTH * self._done // self._total)
            bar = "#" * filled + "-" * (_WIDTH - filled)
            line = f"{self._label} [{bar}] {self._done}/{self._total}"
        else:
            line = f"{self._label} {self._done}"
        self._stream.write(f"\r{line}\x1b[K")
        self._stream.flush()
