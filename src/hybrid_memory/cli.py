"""The ``hybrid-memory`` command. Logs go to stderr: over stdio, stdout is the protocol."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from hybrid_memory import __version__
from hybrid_memory.commands import (
    STORE_COMMANDS,
    add_forget_parser,
    add_move_parser,
    add_recall_parser,
    add_sync_parser,
    follow_directory,
    join_running,
)
from hybrid_memory.commands import arguments as store_arguments
from hybrid_memory.commands import run as run_store_command
from hybrid_memory.exits import (
    INTERRUPTED,
    OK,
    USAGE,
    classify,
    describe_exit_codes,
    settings_error,
)
from hybrid_memory.host.lock import add_data_dir_argument
from hybrid_memory.private import owner_only_umask

if TYPE_CHECKING:
    from hybrid_memory.settings import Settings

logger = logging.getLogger("hybrid_memory")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="hybrid-memory", description="Long-term memory for AI agents over MCP."
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser(
        "serve",
        help="run the MCP server",
        description="Run the MCP server over stdio (one client) or streamable HTTP (http://HOST:PORT/mcp).",
        epilog="exit codes:\n" + describe_exit_codes(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    serve.add_argument(
        "--transport",
        choices=["stdio", "http"],
        default="stdio",
        help="stdio for one client that starts the server (default); http to share one server",
    )
    serve.add_argument(
        "--host",
        help="HTTP bind address (HYBRID_MEMORY_HTTP_HOST, default 127.0.0.1); beyond loopback "
        "HYBRID_MEMORY_HTTP_TOKEN is required and HYBRID_MEMORY_HTTP_ALLOWED_HOSTS names the server",
    )
    serve.add_argument("--port", type=int, help="HTTP port (HYBRID_MEMORY_HTTP_PORT, default 8765)")
    serve.add_argument(
        "--headless",
        action="store_true",
        help="host the store for other servers, hooks and commands with no client of its own (what "
        "the Claude Code hooks start); exits after --idle-exit seconds without a connection",
    )
    serve.add_argument("--idle-exit", type=float, default=900.0, metavar="S", help=argparse.SUPPRESS)
    serve.add_argument(
        "--detached-host",
        action="store_true",
        help="with no host running, start a headless one (it outlives this server) instead of hosting here",
    )
    for p in (serve,):
        add_data_dir_argument(p)
        p.add_argument("--project", help="project scope (HYBRID_MEMORY_PROJECT)")
    _add_eval_parser(sub)
    _add_cleanup_parser(sub)
    _add_stats_parser(sub)
    _add_transfer_parsers(sub)
    _add_graph_parser(sub)
    add_recall_parser(sub)
    add_forget_parser(sub)
    add_move_parser(sub)
    add_sync_parser(sub)
    _add_view_parser(sub)
    _add_plugin_parsers(sub)
    _add_install_parsers(sub)
    stop = sub.add_parser(
        "stop",
        help="stop the process that hosts the data dir's store (a headless host, or a server); waits until "
        "the store is free",
    )
    add_data_dir_argument(stop)
    return parser


def _stop(args: argparse.Namespace) -> int:
    from hybrid_memory.host.lock import data_dir_from_env
    from hybrid_memory.host.stop import stop

    done = stop(data_dir_from_env(args.data_dir))
    if done.code:
        print(f"hybrid-memory: {done.said}", file=sys.stderr)
    else:
        print(done.said)  # a client-side command: its report belongs on stdout
    return done.code


def _add_view_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    view = sub.add_parser(
        "view",
        help="open the read-only memory viewer: prints a loopback URL with a token (joins a running server)",
    )
    view.add_argument("--port", type=int, default=0, help="loopback port (default: any free one)")
    add_data_dir_argument(view)
    view.add_argument("--project", help="the project shown first (HYBRID_MEMORY_PROJECT)")


def _view(args: argparse.Namespace, settings: Settings) -> int:
    import anyio

    from hybrid_memory.projects import project_of_directory
    from hybrid_memory.server import build_server
    from hybrid_memory.serving import host_of
    from hybrid_memory.viewer.command import run_view

    # The page opens on the directory's project; the host it may start still names each client's own.
    first = None if settings.project else project_of_directory(os.getcwd())
    anyio.run(run_view, settings, args.port, host_of(build_server(settings), settings), first)
    return 0


def _add_plugin_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from hybrid_memory.integrations.cli import add_parsers

    add_parsers(sub)


def _add_install_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from hybrid_memory.commands.install import add_parsers

    add_parsers(sub)


def _add_graph_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    graph = sub.add_parser("graph", help="draw the project's note graph")
    graph.add_argument("--html", type=Path, required=True, help="write one self-contained offline HTML page")
    add_data_dir_argument(graph)
    graph.add_argument("--project", help="project scope (HYBRID_MEMORY_PROJECT)")


def _add_transfer_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser("export", help="write memories, notes and links to a versioned JSON Lines file")
    export.add_argument("file", type=Path, help="the JSON Lines file to write")
    export.add_argument(
        "--project",
        dest="projects",
        action="append",
        default=[],
        metavar="P",
        help="a project to export (repeatable; default: this directory's project, or HYBRID_MEMORY_PROJECT)",
    )
    export.add_argument("--all-projects", action="store_true", help="every project and user in the stores")
    export.add_argument("--with-embeddings", action="store_true", help="include each memory's dense vector")
    export.set_defaults(project=None)
    imp = sub.add_parser(
        "import", help="read an export (or an MCP memory server's memory.jsonl) into the stores"
    )
    imp.add_argument("file", type=Path, help="the file to import")
    imp.add_argument("--dry-run", action="store_true", help="validate the file and report; write nothing")
    imp.add_argument(
        "--format",
        choices=["auto", "hybrid-memory", "mcp-memory"],
        default="auto",
        help="the file's kind: our export, or an MCP memory server's memory.jsonl (default: auto-detect)",
    )
    imp.add_argument("--project", help="project for a memory.jsonl (HYBRID_MEMORY_PROJECT)")
    for p in (export, imp):
        add_data_dir_argument(p)
        p.add_argument("--quiet", action="store_true", help="no progress bar")


def _add_stats_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    stats = sub.add_parser("stats", help="print the project's memory statistics as JSON")
    add_data_dir_argument(stats)
    stats.add_argument("--project", help="project scope (HYBRID_MEMORY_PROJECT)")


def _add_cleanup_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cleanup = sub.add_parser(
        "cleanup", help="delete expired memories and evict what the project's limits require"
    )
    cleanup.add_argument("--dry-run", action="store_true", help="list what would be removed; change nothing")
    add_data_dir_argument(cleanup)
    cleanup.add_argument("--project", help="project scope (HYBRID_MEMORY_PROJECT)")


def _add_eval_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    evaluate = sub.add_parser("eval", help="measure retrieval quality on a benchmark through the real server")
    benchmarks = evaluate.add_subparsers(dest="benchmark", required=True)
    locomo = benchmarks.add_parser("locomo", help="LoCoMo (locomo10.json): recall@k, hit@k, nDCG@10, latency")
    _benchmark_arguments(
        locomo, "the LoCoMo JSON file (locomo10.json)", "conversations", "locomo-results.json"
    )
    longmemeval = benchmarks.add_parser(
        "longmemeval", help="LongMemEval (.json or .json.gz): turn and session recall"
    )
    _benchmark_arguments(longmemeval, "the LongMemEval JSON file", "items", "longmemeval-results.json")
    # The server under test gets its own temporary data dir and one project per conversation or item.
    evaluate.set_defaults(data_dir=None, project=None)


def _benchmark_arguments(parser: argparse.ArgumentParser, path_help: str, unit: str, out: str) -> None:
    """An ``eval`` benchmark's arguments; ``--<unit> N`` keeps the first N conversations or items."""
    parser.add_argument("path", type=Path, help=path_help)
    parser.add_argument("--out", type=Path, default=Path(out), help="JSON results file")
    parser.add_argument(f"--{unit}", type=int, metavar="N", help=f"only the first N {unit}")
    parser.add_argument(
        "--half", choices=["tune", "held-out"], help=f"only the even (tune) or odd (held-out) {unit}"
    )
    parser.add_argument("--limit", type=int, default=20, help="recall_memory limit per question (default 20)")
    parser.add_argument(
        "--baselines",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also run the BM25, dense and RRF baselines in this process (default: yes)",
    )
    parser.add_argument(
        "--separate-stores",
        action="store_true",
        help=f"give each of the {unit} a data dir of its own instead of one shared by all",
    )


def _eval(args: argparse.Namespace, settings: Settings) -> int:
    import anyio

    from hybrid_memory.evaluation import EvalOptions, evaluate_locomo, format_report, write_json
    from hybrid_memory.evaluation.lme_runner import evaluate_longmemeval, format_lme_report

    options = EvalOptions(
        embedding=settings.embedding,
        half=args.half,
        limit=args.limit,
        baselines=args.baselines,
        separate_stores=args.separate_stores,
    )
    if args.benchmark == "longmemeval":
        report = anyio.run(lambda: evaluate_longmemeval(args.path, options, items=args.items))
        text = format_lme_report(report)
    else:
        report = anyio.run(lambda: evaluate_locomo(args.path, options, conversations=args.conversations))
        text = format_report(report)
    print(text)  # the eval is a client: its report belongs on stdout
    write_json(report, args.out)
    logger.info("results written to %s", args.out)
    return 0


def _settings(args: argparse.Namespace) -> Settings:
    from hybrid_memory.settings import HttpSettings, load_settings

    overrides: dict[str, object] = {
        k: v for k, v in {"data_dir": args.data_dir, "project": args.project}.items() if v is not None
    }
    if args.command == "serve":
        flags = {k: v for k, v in {"host": args.host, "port": args.port}.items() if v is not None}
        if flags:
            overrides["http"] = HttpSettings(**flags)
    return load_settings(**overrides)


def main(argv: Sequence[str] | None = None) -> int:
    owner_only_umask()  # also reached by ``python -m hybrid_memory`` (the detached host)
    args = _parser().parse_args(argv)
    if args.command == "stop":  # needs no settings: the host has them
        return _stop(args)
    if args.command in ("install", "uninstall"):  # edits an agent's files: no store, no settings
        from hybrid_memory.commands.install import run as run_install

        return run_install(args)
    if args.command in STORE_COMMANDS:
        follow_directory(args)
        # A running server answers before the settings (most of the start-up) are even imported.
        answered = join_running(args.command, args, store_arguments(args))
        if answered is not None:
            return answered
    from pydantic import ValidationError

    try:
        settings = _settings(args)
    except ValidationError as exc:
        print(f"hybrid-memory: {settings_error(exc)}", file=sys.stderr)
        return USAGE
    logging.basicConfig(
        level=settings.log_level, stream=sys.stderr, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )
    # The SDK announces its session manager at INFO: a start-up failure must stay one line.
    logging.getLogger("mcp.server.streamable_http_manager").setLevel(max(logging.WARNING, logging.root.level))
    try:
        if args.command == "serve":
            from hybrid_memory.serving import serve

            serve(args, settings)
        elif args.command == "eval":
            return _eval(args, settings)
        elif args.command in STORE_COMMANDS:  # they join a running server (hybrid_memory.commands)
            return run_store_command(args.command, settings, store_arguments(args))
        elif args.command == "view":
            return _view(args, settings)
        elif args.command in ("hook", "import-transcript"):
            from hybrid_memory.integrations.cli import run

            return run(args, settings)
    except KeyboardInterrupt:
        return INTERRUPTED
    except Exception as exc:  # every failure ends as one line and a code by cause (exits.py)
        code, line = classify(exc)
        print(f"hybrid-memory: {line}", file=sys.stderr)
        return code
    return OK


if __name__ == "__main__":
    sys.exit(main())
