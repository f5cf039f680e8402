"""``hybrid-memory install <agent>`` and ``uninstall <agent>``: the memory in an agent's own configuration.

Codex CLI, Gemini CLI and opencode get their files edited (:mod:`.agents`): the edit keeps
the user's other settings, comments and order, a second install changes no byte, and
uninstall takes out what install put in. Claude Code gets its plugin, installed by its own
``claude plugin`` commands from this checkout's marketplace (:mod:`.claude_code`).
``--dry-run`` prints the change (a unified diff, or the commands) and writes nothing.
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import sys
from pathlib import Path

from hybrid_memory.commands.install import agents, claude_code
from hybrid_memory.commands.install.agents import Change

AGENTS = ("claude-code", "codex", "gemini", "opencode")
_FILE_AGENTS = {"codex": agents.codex, "gemini": agents.gemini, "opencode": agents.opencode}


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    for name, verb in (("install", "add the memory to"), ("uninstall", "remove the memory from")):
        parser = sub.add_parser(
            name,
            help=f"{verb} an agent's configuration: its MCP server and the hooks or plugin that capture "
            "and inject",
            description=f"{verb.capitalize()} AGENT's own configuration in your home directory. "
            "claude-code: the plugin, through `claude plugin`; codex: ~/.codex/config.toml and "
            "hooks.json; gemini: ~/.gemini/settings.json; opencode: ~/.config/opencode/opencode.json "
            "and plugins/hybrid-memory.js. Other settings, comments and order are kept.",
        )
        parser.add_argument("agent", choices=AGENTS, help="the agent CLI")
        parser.add_argument("--dry-run", action="store_true", help="print the change; write nothing")
        if name == "install":
            parser.add_argument(
                "--command",
                dest="hm_command",
                metavar="PATH",
                help="the hybrid-memory command the agent runs (default: this one, by its absolute path)",
            )


def command_path() -> str:
    """This ``hybrid-memory`` command by its absolute path: the agent's PATH need not hold it."""
    beside = Path(sys.executable).parent / "hybrid-memory"
    if beside.is_file() and os.access(beside, os.X_OK):
        return str(beside.absolute())
    argv0 = Path(sys.argv[0])
    if argv0.name == "hybrid-memory" and argv0.is_file():
        return str(argv0.absolute())
    found = shutil.which("hybrid-memory")
    if found:
        return str(Path(found).absolute())
    raise FileNotFoundError(
        "found no hybrid-memory command beside this Python or on PATH; give its path with --command"
    )


def _diff(change: Change) -> str:
    before = (change.before or "").splitlines(keepends=True)
    after = (change.after or "").splitlines(keepends=True)
    old = str(change.path) if change.before is not None else "/dev/null"
    new = str(change.path) if change.after is not None else "/dev/null"
    return "".join(difflib.unified_diff(before, after, old, new))


def _apply(change: Change) -> None:
    if change.after is None:
        change.path.unlink(missing_ok=True)
        return
    change.path.parent.mkdir(parents=True, exist_ok=True)
    temporary = change.path.with_name(f".{change.path.name}.hybrid-memory.tmp")
    temporary.write_text(change.after, encoding="utf-8")
    if change.path.exists():
        shutil.copymode(change.path, temporary)
    os.replace(temporary, change.path)


def plan(agent: str, home: Path, command: str | None) -> list[Change]:
    """The files ``install`` (``command`` given) or ``uninstall`` (``None``) changes for ``agent``."""
    return [c for c in _FILE_AGENTS[agent](home, command) if c.before != c.after]


def run(args: argparse.Namespace) -> int:
    """Install or uninstall; the report (or the diff) on stdout, one line on stderr for a failure."""
    home = Path.home()
    install = args.command == "install"
    try:
        command = (args.hm_command or command_path()) if install else None
        if args.agent == "claude-code":
            return claude_code.run(home, install=install, dry_run=args.dry_run)
        changes = plan(args.agent, home, command)
    except (OSError, ValueError) as exc:
        print(f"hybrid-memory {args.command} {args.agent}: {exc}", file=sys.stderr)
        return 1
    if not changes:
        state = "already has" if install else "has no"
        print(f"{args.agent} {state} hybrid-memory: nothing to change")
        return 0
    for change in changes:
        if args.dry_run:
            sys.stdout.write(_diff(change))
            continue
        _apply(change)
        what = "removed" if change.after is None else "wrote" if change.before is None else "updated"
        print(f"{what} {change.path}")
    if install and not args.dry_run:
        print(_NEXT[args.agent])
    return 0


_NEXT = {
    "codex": "Codex runs the hooks once you trust them (it asks at the next session start).",
    "gemini": "Gemini CLI runs them in folders you trust (it asks when you open one).",
    "opencode": "opencode loads the plugin and the server at its next start.",
}
