"""The commands that use the store (stats, export, import, cleanup, graph, recall, forget, move-project,
sync), wherever it is held.

A server that runs on the data dir holds the store; a command then joins it over its
socket and the server runs the command's body on its open stores
(:mod:`~hybrid_memory.host.join`, :mod:`~hybrid_memory.commands.served`). With no
server, the command takes the host lock, opens the stores itself and runs the same body
(:mod:`~hybrid_memory.commands.handlers`); a server that starts meanwhile waits for it.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import TYPE_CHECKING, Any

from hybrid_memory.host.lock import add_data_dir_argument
from hybrid_memory.host.wire import Reply

if TYPE_CHECKING:
    from hybrid_memory.settings import Settings

STORE_COMMANDS = ("stats", "export", "import", "cleanup", "graph", "recall", "forget", "move-project", "sync")
_TRIES = 3


def _parser(
    sub: argparse._SubParsersAction[argparse.ArgumentParser], name: str, summary: str, description: str
) -> argparse.ArgumentParser:
    """A store command's parser, with the data dir flag every store command takes."""
    parser = sub.add_parser(name, help=summary, description=description)
    add_data_dir_argument(parser)
    return parser


def add_recall_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    recall = _parser(
        sub,
        "recall",
        "search the memory as recall_memory does and print what the model would read",
        "Print recall_memory's answer for QUERY: the cited text a model reads, or with "
        "--json its structured result. Joins a running server; without one, opens the store.",
    )
    recall.add_argument("query", help="what to look for")
    recall.add_argument("--project", help="project scope (HYBRID_MEMORY_PROJECT)")
    recall.add_argument("--limit", type=_limit, default=5, metavar="N", help="hits, 1..50 (default 5)")
    recall.add_argument("--json", action="store_true", help="the structured result as JSON")


def add_forget_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    forget = _parser(
        sub,
        "forget",
        "delete everything one project remembers: its memories, notes and links",
        "Permanently delete every memory, note and link of the project named by --project "
        "(no default, so that no project is forgotten by accident). Other projects are untouched. "
        "Joins a running server; without one, opens the store.",
    )
    forget.add_argument("--project", required=True, help="the project to forget, as stats and view name it")


def add_move_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    move = _parser(
        sub,
        "move-project",
        "move a project's memory into this directory's project (a repository moved, or two split)",
        "Move every memory, note and link of project SOURCE into the project of the current "
        "directory (or --project): for a repository that moved to another path, or, with --thread, to "
        "take the sessions of one repository out of a project that two shared. Nothing is embedded again.",
    )
    move.add_argument("source", help="the project to move from (hybrid-memory stats --project names it)")
    move.add_argument("--project", help="the project to move into (default: the current directory's)")
    move.add_argument(
        "--thread",
        dest="threads",
        action="append",
        metavar="ID",
        help="move only this thread's (session's) memories; repeatable; notes stay",
    )


def add_sync_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sync = _parser(
        sub,
        "sync",
        "exchange what changed with your other machines through a folder or a git repository",
        "Send what this machine's memory changed since the last sync to REMOTE and bring in "
        "what the other machines sent: memories, notes, links, pins, forgets; never private items. "
        "REMOTE is a folder or a git repository (a bare one, a private GitHub repo). A repository's "
        "memory goes to the clone of the same remote URL, wherever it is; run sync inside a clone "
        "to give it its memory.",
    )
    sync.add_argument("remote", type=_remote, help="a folder, a path to a bare git repository, or a git URL")
    sync.set_defaults(project=None)


def follow_directory(parsed: argparse.Namespace) -> None:
    """A store command given no ``--project`` (nor ``HYBRID_MEMORY_PROJECT``) works on the project of
    the directory it runs in, as the hooks do (:mod:`hybrid_memory.projects`)."""
    configured = any(k.upper() == "HYBRID_MEMORY_PROJECT" and v.strip() for k, v in os.environ.items())
    if getattr(parsed, "project", None) or configured:
        return
    from hybrid_memory.projects import legacy_project_name, project_of_directory, root_uri

    cwd = os.getcwd()
    parsed.project = project_of_directory(cwd)
    parsed.legacy = legacy_project_name(root_uri(cwd))


def _remote(text: str) -> str:
    if not text.strip():
        raise argparse.ArgumentTypeError("name the remote: a folder, a bare git repository, or a git URL")
    return text


def _limit(text: str) -> int:
    if not text.isdigit() or not 1 <= int(text) <= 50:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of hits from 1 to 50")
    return int(text)


def arguments(args: argparse.Namespace) -> dict[str, Any]:
    """The parsed flags a body reads, as JSON; paths made absolute (a server has its own cwd)."""
    command = args.command
    if command == "stats":
        return {"legacy": getattr(args, "legacy", None)}
    if command == "forget":
        return {}
    if command == "cleanup":
        return {"dry_run": args.dry_run}
    if command == "graph":
        return {"html": os.path.abspath(args.html)}
    if command == "export":
        return {
            "file": os.path.abspath(args.file),
            "projects": list(args.projects),
            "all_projects": args.all_projects,
            "with_embeddings": args.with_embeddings,
            "quiet": args.quiet,
        }
    if command == "import":
        return {
            "file": os.path.abspath(args.file),
            "format": args.format,
            "dry_run": args.dry_run,
            "quiet": args.quiet,
        }
    if command == "move-project":
        return {"source": args.source, "threads": args.threads}
    if command == "sync":
        from hybrid_memory.transfer.sync.remote import absolute

        return {"remote": absolute(args.remote), "cwd": os.getcwd()}
    if command == "recall":
        return {
            "query": args.query,
            "limit": args.limit,
            "json": args.json,
            "cwd": os.getcwd(),
            "legacy": getattr(args, "legacy", None),
        }
    raise ValueError(f"{command} is not a store command; these are: {', '.join(STORE_COMMANDS)}")


def join_running(command: str, parsed: argparse.Namespace, args: dict[str, Any]) -> int | None:
    """Run ``command`` in the server on the data dir and print its output; None when none answers.

    Reads the three settings a joined command needs (data dir, project, user) straight
    from the flags and the environment, as :class:`~hybrid_memory.settings.Settings`
    would (its variable names are case-insensitive), so that a command a server answers
    never imports pydantic. Everything else is the server's.
    """
    from hybrid_memory.host import join, lock

    env = {name.upper(): value for name, value in os.environ.items()}
    data_dir = lock.data_dir_from_env(parsed.data_dir)
    project = getattr(parsed, "project", None) or env.get("HYBRID_MEMORY_PROJECT")
    scope = {"project": project, "user": env.get("HYBRID_MEMORY_USER", "default")}
    host = lock.connect(data_dir)
    if host is None:
        return None
    try:
        reply = join.call(host, command, scope, args)
    except (join.HostLeft, OSError):
        return None  # that server went away: the full path finds the next one, or opens the store
    return _print(reply)


def run(command: str, settings: Settings, args: dict[str, Any]) -> int:
    """Run a store command in the server that holds the store, else here; print its output."""
    from hybrid_memory.host import join

    scope: dict[str, str | None] = {"project": settings.project, "user": settings.user}
    for _ in range(_TRIES):
        held = join.join_or_hold(settings.data_dir, command)
        if isinstance(held, int):
            try:
                reply = _run_here(command, settings, args)
            finally:
                join.release(held)
            break
        try:
            reply = join.call(held, command, scope, args)
            break
        except join.HostLeft:
            continue  # that server stopped mid-command: the next one (or this process) runs it
    else:
        from hybrid_memory.errors import StoreLockedError

        raise StoreLockedError(
            f"The hybrid-memory server on {settings.data_dir} closed the connection {_TRIES} times "
            "before answering; check its log, then run the command again."
        )
    return _print(reply)


def _print(reply: Reply) -> int:
    # A client-side command: its report belongs on stdout.
    sys.stdout.write(reply.stdout)
    sys.stdout.flush()
    return reply.code


def _run_here(command: str, settings: Settings, args: dict[str, Any]) -> Reply:
    import anyio

    from hybrid_memory.commands.handlers import BODIES, Target

    reply: Reply = anyio.run(BODIES[command], Target(settings, None, sys.stderr), args)
    return reply
