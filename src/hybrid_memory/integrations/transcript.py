"""An agent's session transcript (JSON Lines) read into the messages worth remembering.

Claude Code's transcripts (:mod:`~hybrid_memory.integrations.claude`), Codex CLI's
(:mod:`~hybrid_memory.integrations.codex`) and Gemini CLI's
(:mod:`~hybrid_memory.integrations.gemini`) session files, and the messages opencode's
plugin hands over (:mod:`~hybrid_memory.integrations.opencode`) are read line by line,
each line by its own format's reader. Kept: the user's and the assistant's own words, and a
short line for the files edited and the tests run. Dropped: the agents' scaffolding
(system reminders, IDE context, command tags, interrupts, hook output, compaction
summaries), thinking, tool calls and their raw results (long, noisy, the likeliest place
for a pasted secret), and ``<private>…</private>`` spans. A line that is no message, or
no JSON at all, is skipped and counted in :attr:`Reading.skipped`; no line stops a read.

Stdlib only: the Stop hook imports it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from hybrid_memory.integrations import claude, codex, gemini, opencode
from hybrid_memory.integrations.codex import CODEX_TEXT
from hybrid_memory.integrations.reading import Message, Pass, Reading, clean

__all__ = ["CODEX_TEXT", "Message", "Reading", "clean", "parse_lines", "read_from"]


def _read(state: Pass, raw: bytes) -> None:
    try:
        line = json.loads(raw)
    except ValueError:
        if raw.strip():
            state.skip("not JSON")
        return
    if not isinstance(line, dict):
        state.skip("not JSON")
        return
    try:
        if "payload" in line:  # every line of a Codex rollout, none of Claude Code's
            codex.entry(state, line)
        elif opencode.is_line(line):
            opencode.entry(state, line)
        elif gemini.is_line(line):
            gemini.entry(state, line)
        else:
            claude.entry(state, line)
    except (TypeError, ValueError, AttributeError, KeyError):
        state.skip("malformed")  # a shape no version wrote: that line, not the file, is lost


def _pass(lines: Iterable[bytes], start: int) -> Pass:
    state = Pass()
    state.offset = start
    for raw in lines:
        _read(state, raw)
        state.offset += len(raw) + 1
    state.reading.end = state.offset
    return state


def parse_lines(lines: Iterable[bytes], start: int = 0) -> Reading:
    """The messages of complete transcript lines (without their newlines), the first at byte ``start``."""
    return _pass(lines, start).reading


def read_from(path: Path, offset: int) -> Reading:
    """The messages of the complete lines after byte ``offset``; a partial last line waits for the next."""
    with path.open("rb") as f:
        f.seek(offset)
        data = f.read()
    complete = data.rfind(b"\n") + 1
    state = _pass(data[:complete].split(b"\n")[:-1], offset)
    reading = state.reading
    for session in state.sessions:  # the file's own session, when it records several (resumed, forked)
        if path.stem == session or path.stem.endswith(f"-{session}"):
            reading.session_id = session
    return reading
