"""What a new session is told, on real sessions: junk lines in each project's session start.

    python bench/session_start_junk.py [--data FILE.jsonl] [--transcripts DIR ...] [--show] [--out FILE.json]

Every session of the session-knowledge set (``--data``, default the dev set) is written as
Claude Code's transcript JSON Lines (each user turn, the assistant's text after it) in a git
repository of its project and captured through the real Stop and SessionEnd hooks, against a
real host with the real embedding model; ``--transcripts`` imports Claude Code transcripts
besides (coding sessions with tool use) with ``hybrid-memory import-transcript``. Then a new
session starts in each project, and every line of its context is judged:

- **junk**: a line that is a notification, pasted terminal output or a log, a markdown table,
  an image tag, box drawing, a traceback, an echo of the CLI, code, or a regex fragment listed as
  a command run. The judge is written here, apart from the filter the product uses.
- **tokens**: the context's size (the hooks' estimate).
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.claude_code import hook_env, stop_hosts  # noqa: E402
from tests.e2e.stories import HOOK, Session, Turn, _Writer, hook, session_start  # noqa: E402

from hybrid_memory.integrations.config import estimate_tokens  # noqa: E402

DEV = REPO.parent.parent / "shared" / "datasets" / "session-knowledge" / "dev.jsonl"
JUDGE = {
    "notification": re.compile(
        r"Read the output file|retrieve the result|task-notification|<task-|/private/tmp/|/tmp/claude-|"
        r"[Bb]ackground (?:command|task|bash)|Command running in background|shell id|tool_use_id",
    ),
    "image tag": re.compile(r"\[Image #?\d*\]|\[image\]|\.png\]"),
    "box drawing": re.compile(r"[─━│┃┌┐└┘├┤┬┴┼╭╮╯╰═║╔╗╚╝⎿⎡⎣▐▛▜▌▝▘█░▒▓]"),
    "table": re.compile(r"\|\s*:?-{3,}|\|[^|\n]{1,60}\|[^|\n]{1,60}\|"),
    "traceback": re.compile(
        r"Traceback \(most recent|File \"[^\"]+\", line \d+|\b[A-Z]\w*(?:Error|Exception): \S|"
        r"\bat [\w.$<>]+\([\w./]+:\d+|panicked at|Segmentation fault"
    ),
    "terminal": re.compile(
        r"(?:^|\s)\$ \w|\w+@[\w.-]+:[~/]|npm (?:ERR|WARN)!|^\s*(?:error|warning)\[|\bexit code \d|"
        r"\bPS [A-Z]:\\|\u276f|\u279c|\[\d+/\d+\]|\d+%\|█|\berror: |\bwarning: |^\s*at \w|"
        r"\d{2}:\d{2}:\d{2}[.,]\d{3}"
    ),
    "status markers": re.compile(r"\[(?:SUCCESS|OK|DONE|FAILED|PASS|INFO|WARN|ERROR)\]|[✅❌]"),
    "list of names": re.compile(r"(?:\b[A-Z][\w-]*, ){5,}"),
    "CLI echo": re.compile(
        r"Unknown (?:skill|slash command|command)|permission check failed|Request interrupted|"
        r"No response requested|\(no content\)|Caveat: The messages below|<command-|<local-command|"
        r"<system-reminder|hook additional context|Stop hook feedback"
    ),
    "regex as command": re.compile(r"\bran [^;]*?(?:\.\*|\\[dwsb]|\[\^|\(\?|\|\w+\)|\$\))"),
    "code": re.compile(
        r"```|(?:^|[:;] )(?:def |class |import |from \S+ import |const |let |function |#include|"
        r"SELECT .* FROM)|"
        r"=>\s*\{|\};|\)\s*\{|^\s*[{}\[\]]\s*$"
    ),
}
_CITATION = re.compile(r"^- \[memory:[^\]]+\] (?:\(\d{4}-\d{2}-\d{2}\) )?")


def judge(line: str) -> list[str]:
    """Why ``line`` (of a session start) is junk; empty for a line worth reading."""
    text = _CITATION.sub("", line)
    return [name for name, pattern in JUDGE.items() if pattern.search(text)]


def _slug(project: str) -> str:
    return re.sub(r"[^\w.-]+", "-", project).strip("-")[-60:] or "root"


def _sessions(data: Path) -> dict[str, list[dict[str, Any]]]:
    by_project: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for raw in data.read_text().splitlines():
        if raw.strip():
            session = json.loads(raw)
            by_project[session["project"]].append(session)
    return by_project


def _turns(session: dict[str, Any]) -> list[Turn]:
    turns = session["turns"]
    replies = [t.get("prev_assistant") or "" for t in turns[1:]] + [""]
    return [Turn(t["text"], reply or "OK.") for t, reply in zip(turns, replies, strict=True)]


def capture(session: Session, data_dir: Path, transcripts: Path) -> list[str]:
    """Write ``session`` whole and capture it with the Stop and SessionEnd hooks, as a session that ends."""
    transcripts.mkdir(parents=True, exist_ok=True)
    path = transcripts / f"{session.id}.jsonl"
    writer = _Writer(session, path)
    for turn in session.turns:
        writer.turn(turn)
    base = {"session_id": session.id, "transcript_path": str(path), "cwd": str(session.cwd)}
    errors = []
    for event, name in (("stop", "Stop"), ("session-end", "SessionEnd")):
        payload = {**base, "hook_event_name": name, "stop_hook_active": False, "reason": "prompt_input_exit"}
        done = hook(event, payload, data_dir, HYBRID_MEMORY_HOOK_DETACH="0")
        if done.returncode != 0 or done.stderr:
            errors.append(f"{session.id} {event}: {done.stderr.strip()[:300]}")
    return errors


def _imported_projects(paths: list[Path], data_dir: Path) -> list[Path]:
    if not paths:
        return []
    done = subprocess.run(
        [str(HOOK), "import-transcript", *map(str, paths)],
        env=hook_env(data_dir),
        capture_output=True,
        text=True,
        timeout=1800,
        check=True,
    )
    found = re.finditer(
        r"messages \(\d+ stored\) from (.+?)(?:; lines skipped.*)?$", done.stderr, re.MULTILINE
    )
    return sorted({Path(m.group(1)) for m in found})


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--data", type=Path, default=DEV, help="session-knowledge JSON Lines")
    parser.add_argument("--transcripts", type=Path, nargs="*", default=[], help="Claude Code transcripts")
    parser.add_argument("--show", action="store_true", help="print every project's session start")
    parser.add_argument("--out", type=Path, help="write the figures and contexts as JSON")
    args = parser.parse_args()
    rows: list[dict[str, Any]] = []
    errors: list[str] = []
    with tempfile.TemporaryDirectory(prefix="session-start-junk-") as tmp:
        root, data_dir = Path(tmp), Path(tmp) / "data"
        try:
            projects: list[tuple[str, Path, str]] = []
            for project, sessions in _sessions(args.data).items():
                repo = root / "projects" / _slug(project)
                repo.mkdir(parents=True, exist_ok=True)
                subprocess.run(["git", "init", "-q", str(repo)], check=True, timeout=30)
                for session in sessions:
                    if session["turns"]:
                        played = Session(session["session"], repo, _turns(session))
                        errors += capture(played, data_dir, root / "transcripts")
                projects.append((project, repo, "dataset"))
            projects += [(str(p), p, "transcripts") for p in _imported_projects(args.transcripts, data_dir)]
            for project, repo, source in projects:
                context = session_start(repo, "bench-new-session", data_dir)
                junk = [(line, judge(line)) for line in context.splitlines() if judge(line)]
                rows.append(
                    {
                        "project": project,
                        "source": source,
                        "tokens": estimate_tokens(context) if context else 0,
                        "lines": len([ln for ln in context.splitlines() if ln.startswith("- ")]),
                        "junk": [{"line": line, "why": why} for line, why in junk],
                        "context": context,
                    }
                )
        finally:
            stop_hosts(data_dir)
    tokens = [r["tokens"] for r in rows if r["tokens"]]
    summary = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "load": Path("/proc/loadavg").read_text().split()[:3],
        "data": args.data.name,
        "projects": len(rows),
        "with_context": len(tokens),
        "junk_lines": sum(len(r["junk"]) for r in rows),
        "junk_lines_dataset": sum(len(r["junk"]) for r in rows if r["source"] == "dataset"),
        "projects_with_junk": sum(1 for r in rows if r["junk"]),
        "tokens_median": statistics.median(tokens) if tokens else 0,
        "tokens_max": max(tokens, default=0),
        "hook_errors": errors,
    }
    for r in rows:
        print(f"{r['project'][-50:]:50} lines {r['lines']:2}  tokens {r['tokens']:4}  junk {len(r['junk'])}")
        for j in r["junk"]:
            print(f"    {', '.join(j['why'])}: {j['line'][:200]}")
        if args.show and r["context"]:
            print("    " + r["context"].replace("\n", "\n    "))
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "projects": rows}, indent=1))


if __name__ == "__main__":
    main()
