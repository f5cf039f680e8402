"""Is what the UserPromptSubmit hook injects worth its tokens? LoCoMo through the hook path.

    python bench/plugin_injection.py [PATH] [--half tune|held-out] [--conversations N]
        [--sweep 0.5 0.6 ...] [--out FILE.json]

Each LoCoMo conversation becomes one project (its own directory): each of its sessions is
written as a Claude Code transcript (one JSON line per turn, the first speaker as the
user) and captured by the Stop hook. Then every question (categories 1-4) is a prompt:

* in its own project: does the injected context cite a turn of the question's evidence?
  (share of questions; tokens injected per question, as the host counts them)
* in the next conversation's project: is nothing injected? (share of questions)

and what SessionStart injects for a new session in each project (tokens).

The hooks run in this process (``hybrid_memory.integrations.hooks.run``, the function a
hook process runs, with the same stdin and stdout) against a headless host the first
one starts; starting a Python process per prompt would only add time, not change what
is injected. ``--sweep`` runs the questions again at other thresholds
(``HYBRID_MEMORY_HOOK_MIN_MATCH``), to choose the default.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.claude_code import stop_hosts  # noqa: E402

from hybrid_memory.evaluation.locomo import Conversation, load_locomo  # noqa: E402
from hybrid_memory.integrations.config import HookConfig, project_of  # noqa: E402
from hybrid_memory.integrations.hooks import run  # noqa: E402
from hybrid_memory.models import Scope  # noqa: E402
from hybrid_memory.service.writes.threads import memory_id  # noqa: E402

DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "locomo" / "locomo10.json"
CITED = re.compile(r"\[memory:([0-9a-f-]{36})\]")


def _hook(event: str, payload: dict[str, Any]) -> str:
    out, err = io.StringIO(), io.StringIO()
    run(event, io.StringIO(json.dumps(payload)), out, err)
    if err.getvalue():
        raise SystemExit(f"hook {event} failed: {err.getvalue().strip()}")
    return out.getvalue()


def _capture(conv: Conversation, project_dir: Path, transcripts: Path) -> dict[str, str]:
    """Every session of ``conv`` captured by the Stop hook; returns memory id -> dia_id."""
    ids: dict[str, str] = {}
    # The project as the hooks name it (its repository, else its directory): memory ids derive from it.
    scope = Scope(project=project_of(HookConfig.from_env(), project_dir), user="default")
    for session in conv.sessions:
        session_id = f"{conv.id}-s{session.number}"
        path = transcripts / f"{session_id}.jsonl"
        with path.open("w") as f:
            for i, turn in enumerate(session.turns):
                role = "user" if turn.speaker == conv.speaker_a else "assistant"
                uuid = f"{conv.id}-{turn.dia_id}"
                stamp = session.date.replace(second=min(59, i)).isoformat().replace("+00:00", "Z")
                entry = {
                    "type": role,
                    "uuid": uuid,
                    "timestamp": stamp,
                    "cwd": str(project_dir),
                    "sessionId": session_id,
                    "message": {"role": role, "content": turn.content},
                }
                f.write(json.dumps(entry) + "\n")
                for chunk in range(3):
                    ids[memory_id(scope, session_id, uuid, chunk)] = turn.dia_id
        _hook("stop", {"session_id": session_id, "transcript_path": str(path), "cwd": str(project_dir)})
    return ids


def _tokens() -> int:
    """The tokens of the last injection, as the host counted them (the hooks' log)."""
    log = Path(HookConfig.from_env().state_dir) / "injections.jsonl"
    return int(json.loads(log.read_text().splitlines()[-1])["tokens"])


def _ask(prompt: str, project_dir: Path) -> str:
    payload = {"session_id": "bench-prompt", "cwd": str(project_dir), "prompt": prompt}
    out = _hook("user-prompt-submit", payload)
    return json.loads(out)["hookSpecificOutput"]["additionalContext"] if out else ""


def _session_start(project_dir: Path) -> int:
    """Tokens the SessionStart hook injects for a new session in the project."""
    out = _hook("session-start", {"session_id": "bench-start", "cwd": str(project_dir), "source": "startup"})
    return _tokens() if out else 0


def _summary(rows: list[tuple[int, int, bool, bool]]) -> dict[str, Any]:
    """Rows of (category, tokens injected, evidence cited, nothing injected in the other project)."""
    questions = len(rows)
    by_category: dict[int, list[bool]] = {}
    for category, _, hit, _ in rows:
        by_category.setdefault(category, []).append(hit)
    tokens = [t for _, t, _, _ in rows]
    return {
        "questions": questions,
        "evidence_injected_share": round(sum(r[2] for r in rows) / questions, 3),
        "by_category": {str(c): round(sum(v) / len(v), 3) for c, v in sorted(by_category.items())},
        "injected_tokens_median": statistics.median(tokens),
        "injected_tokens_median_when_injected": statistics.median([t for t in tokens if t] or [0]),
        "other_project_nothing_injected_share": round(sum(r[3] for r in rows) / questions, 3),
    }


def through_hooks(conversations: list[Conversation], dirs: list[Path], ids: dict[str, str]) -> dict[str, Any]:
    """Every question through the UserPromptSubmit hook, at the configured threshold."""
    rows = []
    for n, conv in enumerate(conversations):
        for q in (q for q in conv.questions if q.category != 5):
            injected = _ask(q.text, dirs[n])
            cited = {ids.get(m) for m in CITED.findall(injected)}
            tokens = _tokens() if injected else 0
            rows.append(
                (
                    q.category,
                    tokens,
                    bool(cited & set(q.evidence)),
                    not _ask(q.text, dirs[(n + 1) % len(dirs)]),
                )
            )
    return _summary(rows)


def sweep(
    conversations: list[Conversation], dirs: list[Path], ids: dict[str, str], thresholds: list[float]
) -> list[dict[str, Any]]:
    """Every question through the hook again at each threshold."""
    results = []
    for t in thresholds:
        os.environ["HYBRID_MEMORY_HOOK_MIN_MATCH"] = str(t)
        try:
            results.append({"min_match": t, **through_hooks(conversations, dirs, ids)})
        finally:
            os.environ.pop("HYBRID_MEMORY_HOOK_MIN_MATCH")
        print(json.dumps(results[-1]), file=sys.stderr)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--half", choices=["tune", "held-out"])
    parser.add_argument("--conversations", type=int)
    parser.add_argument(
        "--sweep", type=float, nargs="+", metavar="T", help="also these thresholds, on the same candidates"
    )
    parser.add_argument("--sweep-only", action="store_true", help="skip the run through the hooks")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "plugin_injection.json")
    args = parser.parse_args()
    dataset = load_locomo(args.path, conversations=args.conversations, half=args.half)
    work = Path(tempfile.mkdtemp(prefix="hm-inject-"))
    data_dir = work / "data"
    os.environ["HYBRID_MEMORY_DATA_DIR"] = str(data_dir)
    os.environ["HYBRID_MEMORY_HOOK_DETACH"] = "0"
    os.environ["HYBRID_MEMORY_HOOK_TIMEOUT_S"] = "300"
    load_before = os.getloadavg()
    results: dict[str, Any] = {"dataset": str(args.path), "half": args.half}
    results["min_match"] = HookConfig.from_env().min_match
    try:
        transcripts = work / "transcripts"
        transcripts.mkdir()
        dirs, ids = [], {}
        conversations = list(dataset.conversations)
        for conv in conversations:
            project_dir = work / "projects" / conv.id
            project_dir.mkdir(parents=True)
            dirs.append(project_dir)
            ids.update(_capture(conv, project_dir, transcripts))
            print(f"captured {conv.id}: {len(conv.turns)} turns", file=sys.stderr)
        starts = [_session_start(d) for d in dirs]
        results["session_start_tokens"] = {"median": statistics.median(starts), "max": max(starts)}
        if args.sweep:
            results["sweep"] = sweep(conversations, dirs, ids, args.sweep)
        if not args.sweep_only:
            results["hooks"] = through_hooks(conversations, dirs, ids)
            print(json.dumps(results["hooks"]), file=sys.stderr)
    finally:
        stop_hosts(data_dir)
        shutil.rmtree(work, ignore_errors=True)
    results["load_average_before_after"] = [list(load_before), list(os.getloadavg())]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
