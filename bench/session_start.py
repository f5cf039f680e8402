"""What a new session knows: multi-session coding stories played through the real hooks.

    python bench/session_start.py [--out FILE.json]

Each story of ``bench/session_stories.py`` is a few Claude Code sessions in one project (a git
repository of its own), written as Claude Code's transcript JSON Lines and run through
``hybrid-memory hook <event>`` processes (SessionStart, UserPromptSubmit, Stop, SessionEnd)
against a real host with the real embedding model; no model writes anything. Then a new
session starts, and its SessionStart context is scored against the story's key:

- **known**: the share of the key's facts found in one line of it;
- **stale**: lines that show a replaced value without its replacement;
- **tokens**: its size (the estimate the hooks log in ``injections.jsonl``);
- **precision**: of the notes the sessions left (decisions, preferences, facts), the share
  that states a fact of the key (current or replaced);
- the notes and links in the project's graph.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from tests.e2e.claude_code import stop_hosts  # noqa: E402
from tests.e2e.stories import Session, play, session_start  # noqa: E402

from hybrid_memory.host.client import connect  # noqa: E402
from hybrid_memory.integrations.config import estimate_tokens  # noqa: E402
from session_stories import Story, stories  # noqa: E402

STATED = ("decision", "preference", "fact")


def _has(line: str, words: tuple[str, ...]) -> bool:
    lowered = line.lower()
    return all(w in lowered for w in words)


def _notes(data_dir: Path, project: Path) -> tuple[list[dict[str, Any]], int, int]:
    """The project's notes that state something (superseded ones too), and its graph's size."""
    with connect(data_dir, project, timeout_s=60, start=False) as host:
        found = host.call_tool(
            "recall_memory",
            {
                "query": "decisions, rules, preferences and facts of this project",
                "kinds": ["note"],
                "limit": 50,
                "include_invalid": True,
                "with_context": False,
                "max_tokens": 8000,
            },
        )["results"]
        graph = host.call_tool("map_notes", {"limit": 50})
    stated = [n for n in found if n.get("note_type") in STATED]
    return stated, int(graph["notes"]), int(graph["links"])


def run_story(story: Story, project: Path, data_dir: Path, transcripts: Path) -> dict[str, Any]:
    subprocess.run(["git", "init", "-q", str(project)], check=True, timeout=30)
    errors: list[str] = []
    for i, turns in enumerate(story.sessions, 1):
        session = Session(f"{project.name}-{i}", project, turns)
        errors += play(session, data_dir, transcripts).errors
    started = time.perf_counter()
    context = session_start(project, f"{project.name}-new", data_dir)
    seconds = time.perf_counter() - started
    lines = context.splitlines()
    known = [f for f in story.must_know if any(_has(line, f) for line in lines)]
    stale = [
        line
        for line in lines
        for old, new in story.replaced
        if old in line.lower() and new not in line.lower()
    ]
    notes, note_count, links = _notes(data_dir, project)
    keys = [*story.must_know, *((old,) for old, _ in story.replaced)]
    true = [n for n in notes if any(_has(str(n.get("text", "")), k) for k in keys)]
    return {
        "story": story.name,
        "known": len(known) / len(story.must_know),
        "missing": [" ".join(f) for f in story.must_know if f not in known],
        "stale_lines": stale,
        "tokens": estimate_tokens(context),
        "session_start_s": round(seconds, 3),
        "notes_stating": len(notes),
        "precision": len(true) / len(notes) if notes else None,
        "wrong_notes": [n["text"][:160] for n in notes if n not in true],
        "graph_notes": note_count,
        "graph_links": links,
        "hook_errors": errors,
        "context": context,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, help="write the figures as JSON")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory(prefix="session-start-") as tmp:
        root, data_dir = Path(tmp), Path(tmp) / "data"
        try:
            for story in stories(root / "projects"):
                project = root / "projects" / story.slug
                rows.append(run_story(story, project, data_dir, root / "transcripts"))
        finally:
            stop_hosts(data_dir)
    precisions = [r["precision"] for r in rows if r["precision"] is not None]
    summary = {
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "machine": f"{platform.machine()}, Python {platform.python_version()}",
        "load": Path("/proc/loadavg").read_text().split()[:3],
        "stories": len(rows),
        "known": statistics.mean(r["known"] for r in rows),
        "stale_lines": sum(len(r["stale_lines"]) for r in rows),
        "tokens_median": statistics.median(r["tokens"] for r in rows),
        "tokens_max": max(r["tokens"] for r in rows),
        "precision": statistics.mean(precisions) if precisions else None,
        "notes": sum(r["notes_stating"] for r in rows),
    }
    for r in rows:
        precision = "-" if r["precision"] is None else f"{r['precision']:.2f}"
        print(
            f"{r['story']:30} known {r['known']:.0%}  stale {len(r['stale_lines'])}  tokens {r['tokens']:4}  "
            f"notes {r['notes_stating']:2} precision {precision}  "
            f"graph {r['graph_notes']}/{r['graph_links']}  missing {r['missing']}"
        )
    print(json.dumps(summary, indent=1))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "stories": rows}, indent=1))


if __name__ == "__main__":
    main()
