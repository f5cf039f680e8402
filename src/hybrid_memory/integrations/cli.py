"""The plugin's commands: ``hook <event>`` (for Claude Code) and ``import-transcript`` (for people)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from hybrid_memory.host.lock import add_data_dir_argument
from hybrid_memory.integrations.hooks import EVENTS

if TYPE_CHECKING:  # the parser is built on every command's path, joined ones included
    from hybrid_memory.settings import Settings


IMPORT_S = 3600.0
"""How long one transcript's import may take (a long session is embedded whole)."""


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    hook = sub.add_parser(
        "hook",
        help="run one Claude Code hook (the plugin calls it): JSON on stdin, JSON on stdout, always exit 0",
    )
    hook.add_argument("event", choices=list(EVENTS), help="the Claude Code hook event it handles")
    hook.set_defaults(data_dir=None, project=None)
    imp = sub.add_parser(
        "import-transcript",
        help="remember Claude Code (or Codex CLI) sessions recorded before the hooks were installed",
        description="Remember session transcripts as the hooks would have captured them: each file is one "
        "session (thread = its session id), in the project of the directory it ran in. Claude Code's "
        "~/.claude/projects/<dir>/*.jsonl and Codex CLI's ~/.codex/sessions/**/rollout-*.jsonl are read. "
        "Idempotent: what the hooks already captured is not stored twice.",
    )
    imp.add_argument(
        "paths",
        nargs="+",
        type=Path,
        help="transcript files, or directories of them (e.g. ~/.claude/projects/<project-dir>)",
    )
    add_data_dir_argument(imp)
    imp.set_defaults(project=None)


def _is_subagent(path: Path) -> bool:
    """A sub-agent's transcript (``agent-*.jsonl``, ``<session>/subagents/``): its parent's tool work."""
    return path.name.startswith("agent-") or path.parent.name == "subagents"


def _transcripts(paths: list[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_dir():
            yield from sorted(path.rglob("*.jsonl"))
        elif path.is_file():
            yield path
        else:
            raise FileNotFoundError(f"{path} is neither a transcript file nor a directory of them")


def _counts(skipped: dict[str, int]) -> str:
    return ", ".join(f"{n} {kind}" for kind, n in sorted(skipped.items(), key=lambda kv: (-kv[1], kv[0])))


def run(args: argparse.Namespace, settings: Settings) -> int:
    if args.command == "hook":
        from hybrid_memory.integrations.hooks import run as run_hook

        return run_hook(args.event, sys.stdin, sys.stdout, sys.stderr)
    from hybrid_memory.host import wire
    from hybrid_memory.host.client import ask
    from hybrid_memory.integrations.transcript import read_from

    sessions = stored = unchanged = 0
    skipped: dict[str, int] = {}
    undated = 0
    subagents: list[Path] = []
    for transcript in _transcripts(args.paths):
        if _is_subagent(transcript):
            subagents.append(transcript)
            continue
        whole = read_from(transcript, 0)
        if whole.cwd is None:
            print(f"skipped {transcript}: no message with a working directory", file=sys.stderr)
            continue
        # The thread the hooks give the session, so a session imported and captured is stored once.
        session = whole.session_id or transcript.stem
        # One capture request, as a hook sends it: the host reads the file and stores what it lacks.
        params = {"session_id": session, "transcript": str(transcript.resolve()), "cwd": whole.cwd}
        done = ask(settings.data_dir, wire.capture_request(params), timeout_s=120.0, answer_within_s=IMPORT_S)
        sessions += 1
        stored += int(done.get("stored") or 0)
        unchanged += int(done.get("unchanged") or 0)
        lines_skipped: dict[str, int] = done.get("skipped") or {}
        for kind, n in lines_skipped.items():
            skipped[kind] = skipped.get(kind, 0) + n
        lines = f"; lines skipped: {_counts(lines_skipped)}" if lines_skipped else ""
        if whole.undated:
            undated += whole.undated
            lines += f"; {whole.undated} unreadable timestamps dated by their neighbours"
        print(
            f"{session}: {done.get('messages')} messages ({done.get('stored')} stored) "
            f"from {whole.cwd}{lines}",
            file=sys.stderr,
        )
    if subagents:
        print(
            f"skipped {len(subagents)} sub-agent transcripts (agent-*.jsonl): their work is the parent "
            "session's tool use, remembered through what the parent session says",
            file=sys.stderr,
        )
    # A client-side command: its summary belongs on stdout.
    print(f"imported {sessions} sessions: {stored} messages stored, {unchanged} already remembered")
    if skipped:
        print(f"lines that were no message, skipped: {_counts(skipped)}")
    if undated:
        print(f"messages with an unreadable timestamp, dated by their neighbours or the file: {undated}")
    return 0
