"""The Claude Code plugin's cost: hook wall times, capture of a long session, added time per session.

    python bench/plugin_hooks.py [--prompts 40] [--turns 500] [--sessions 7] [--out FILE.json]
        [--earlier-src CHECKOUT/src]

1. ``UserPromptSubmit``: ``hybrid-memory hook user-prompt-submit`` run as Claude Code runs
   it (a process, JSON on stdin) against a host that is already running, over a memory
   holding a captured session; p50 / p95 of the wall time, beside the same Python
   starting and exiting (``python -c pass``) in the same run. The session edited a file every
   third turn in a git repository, one of them changed since in a commit, and the prompts come
   from a subdirectory of another worktree of that repository: the hook and the host name
   the project through the worktree's ``.git`` file, and recall hashes the hits' files.
   The in-process cost of naming a directory's project is reported beside it.
2. Capture of a ``--turns``-turn coding transcript (a user and an assistant message a turn,
   every few turns a rule and a decision, files read and edited and a test run), notes,
   entities and digest included:
   the time the hook holds the session (detached, the default) and the time the capture
   itself takes (``HYBRID_MEMORY_HOOK_DETACH=0``), beside the same messages sent straight
   to ``remember_thread`` in the same run. Then what a session pays at the end of each
   turn: a Stop hook with one new turn in that long transcript, p50 / p95 of both times.
3. With the real Claude Code (``tools/claude-code``, skipped without it) against the
   loopback stand-in of the Messages API: one-turn ``claude -p`` sessions, plugin
   enabled and disabled in alternation; the medians and their difference.

What each topic's prompt finds (with a budget that cuts nothing) and what a new session's start
is given are written too, as lines with the ids left out. With ``--earlier-src`` (the ``src``
of another version's checkout) each topic's prompt is also asked through that version's hook and
host (this version's host stopped first), over the same store: whether both find the same memories.

Prints a summary and the machine's load averages; writes the figures as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from time import perf_counter

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.claude_code import CLAUDE, OFFLINE, git_project, stop_hosts  # noqa: E402
from tests.e2e.messages_standin import messages_standin  # noqa: E402

from hybrid_memory.host.client import connect  # noqa: E402
from hybrid_memory.integrations.capture import BATCH  # noqa: E402
from hybrid_memory.integrations.config import HookConfig  # noqa: E402
from hybrid_memory.integrations.pending import settled  # noqa: E402
from hybrid_memory.integrations.transcript import read_from  # noqa: E402
from hybrid_memory.projects import project_of_directory  # noqa: E402

HOOK = Path(sys.executable).parent / "hybrid-memory"
STOP_TURNS = 15
"""Stop hooks timed one new turn each, in each mode."""
TOPICS = [
    "database",
    "deploy",
    "release",
    "tests",
    "queue",
    "invoices",
    "backups",
    "the API",
    "auth",
    "logging",
]


def _env(data_dir: Path, **extra: str) -> dict[str, str]:
    # The hooks run as installed: from compiled modules (a development shell may turn their writing off).
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("HYBRID_MEMORY_") and k != "PYTHONDONTWRITEBYTECODE"
    }
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["HYBRID_MEMORY_DATA_DIR"] = str(data_dir)
    env.update(extra)
    return env


def _source(topic: str) -> str:
    return f"src/{topic.replace(' ', '_')}.py"


def _repository(path: Path) -> Path:
    """A git repository with one commit holding a source file per topic (a worktree needs a commit)."""
    git_project(path)
    (path / "src").mkdir()
    for topic in TOPICS:
        (path / _source(topic)).write_text(f"# {topic}\nOPTION = 0\n")
    _git(path, "add", ".")
    _git(path, "commit", "-q", "-m", "first")
    return path


def _git(cwd: Path, *args: str) -> None:
    names = {"GIT_AUTHOR_NAME": "b", "GIT_AUTHOR_EMAIL": "b@example.org"}
    env = {**os.environ, **names, "GIT_COMMITTER_NAME": "b", "GIT_COMMITTER_EMAIL": "b@example.org"}
    subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True)


def _turns(i: int, session: str, cwd: Path) -> list[tuple[str, object]]:
    """Turn ``i`` of a coding session: a question and its answer; every few turns a rule, a decision,
    files read and edited and a command run, so capture has notes and entities to draw."""
    topic = TOPICS[i % len(TOPICS)]
    # Each session says its own words: capture stores no text the project already holds under another id.
    ask = f"Turn {i} of {session}: what did we decide about {topic}? We said option {i % 7} for {topic}."
    if i % 5 == 0:
        ask += f" We use Redis {i % 3 + 5} for the {topic} cache. Never deploy {topic} on Fridays."
    turns: list[tuple[str, object]] = [
        ("user", ask),
        (
            "assistant",
            f"For {topic} we chose option {i % 7} in turn {i} of {session}, because it was simpler.",
        ),
    ]
    if i % 3 == 0:
        path = str(cwd / _source(topic))
        uses = [
            {"type": "tool_use", "id": f"{session}-r{i}", "name": "Read", "input": {"file_path": path}},
            {
                "type": "tool_use",
                "id": f"{session}-e{i}",
                "name": "Edit",
                "input": {"file_path": path, "old_string": "0", "new_string": "1"},
            },
            {"type": "tool_use", "id": f"{session}-b{i}", "name": "Bash", "input": {"command": "make test"}},
        ]
        results = [
            {"type": "tool_result", "tool_use_id": u["id"], "content": "ok", "is_error": i % 4 == 0}
            for u in uses
        ]
        turns += [("assistant", uses), ("user", results)]
    return turns


def _transcript(path: Path, session: str, turns: int, cwd: Path, first: int = 0) -> None:
    """Turns ``first`` .. ``turns - 1`` of the session, written anew, or with ``first`` appended."""
    with path.open("a" if first else "w") as f:
        for i in range(first, turns):
            for j, (role, content) in enumerate(_turns(i, session, cwd)):
                entry = {
                    "type": role,
                    "uuid": f"{session}-{role}-{i}-{j}",
                    "timestamp": f"2026-11-20T10:{i // 60 % 60:02d}:{i % 60:02d}.000Z",
                    "cwd": str(cwd),
                    "sessionId": session,
                    "message": {"role": role, "content": content},
                }
                f.write(json.dumps(entry) + "\n")


def _hook(
    event: str, payload: dict[str, object], env: dict[str, str], said: list[str] | None = None
) -> float:
    start = perf_counter()
    done = subprocess.run(
        [str(HOOK), "hook", event],
        input=json.dumps(payload),
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = perf_counter() - start
    if done.stderr:
        raise SystemExit(f"hook {event} failed: {done.stderr.strip()}")
    if said is not None:
        said.append(json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout else "")
    return elapsed


def _settled(data_dir: Path) -> None:
    """Wait until no capture is in progress (as a starting session does)."""
    settled(HookConfig(data_dir, None, 0, 0, 0, 600, True), 600)


def _shown(text: str) -> list[str]:
    """The lines injected, each memory's id left out: ids derive from the project's path, which differs
    from run to run, the texts and their order do not."""
    return [re.sub(r"\[memory:[^\]\s]+\]", "[memory]", line) for line in text.splitlines()[1:] if line]


def _quantiles(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 1),
        "p95_ms": round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))] * 1000, 1),
    }


def hooks(work: Path, prompts: int, turns: int, earlier: Path | None = None) -> dict[str, object]:
    data_dir, cwd = work / "data", _repository(work / "ledger")
    _git(cwd, "worktree", "add", "-q", "-b", "review", str(work / "ledger-review"))
    asked_in = work / "ledger-review" / "src" / "api"
    asked_in.mkdir(parents=True)
    env = _env(data_dir)
    transcript = work / "long.jsonl"
    _transcript(transcript, "long", turns, cwd)
    payload = {"session_id": "long", "transcript_path": str(transcript), "cwd": str(cwd)}
    # The first hook starts the host (measured apart: it happens once per idle period).
    cold = _hook("session-start", {"session_id": "warm-up", "cwd": str(cwd)}, env)
    capture_s = _hook("stop", payload, {**env, "HYBRID_MEMORY_HOOK_DETACH": "0"})
    # What a session pays at the end of each turn: a Stop hook with one new turn in a long transcript,
    # done before it returns (DETACH=0) and as installed (detached).
    stop_inline_s, stop_detached_s = [], []
    for k in range(STOP_TURNS):
        _transcript(transcript, "long", turns + k + 1, cwd, first=turns + k)
        stop_inline_s.append(_hook("stop", payload, {**env, "HYBRID_MEMORY_HOOK_DETACH": "0"}))
    for k in range(STOP_TURNS, 2 * STOP_TURNS):
        _transcript(transcript, "long", turns + k + 1, cwd, first=turns + k)
        stop_detached_s.append(_hook("stop", payload, env))
        _settled(data_dir)
    # Baseline in the same run: the same messages sent straight to remember_thread (what capture adds
    # on top is reading and filtering the transcript, and the notes, entities and digest drawn from it).
    messages = read_from(transcript, 0).messages
    start = perf_counter()
    with connect(data_dir, cwd, timeout_s=600) as host:
        for i in range(0, len(messages), BATCH):
            batch = [m.as_argument() for m in messages[i : i + BATCH]]
            host.call_tool("remember_thread", {"thread_id": "baseline", "messages": batch})
    baseline_s = perf_counter() - start
    _transcript(transcript, "long2", turns, cwd)
    detached_s = _hook("stop", {**payload, "session_id": "long2"}, env)
    start = perf_counter()
    _settled(data_dir)
    detached_done_s = detached_s + perf_counter() - start

    (cwd / _source("database")).write_text("# database\nOPTION = 9\n")  # changed since the session
    _git(cwd, "commit", "-q", "-am", "database option 9")
    start = perf_counter()
    for _ in range(1000):
        project_of_directory(asked_in)
    naming_us = (perf_counter() - start) * 1000
    if project_of_directory(asked_in) != project_of_directory(cwd):
        raise SystemExit("the worktree's subdirectory is not in the repository's project")

    prompt_s, python_s = [], []
    for i in range(prompts):
        topic = TOPICS[i % len(TOPICS)]
        ask = {
            "session_id": "bench",
            "cwd": str(asked_in),
            "prompt": f"What did we decide about {topic} last time?",
        }
        prompt_s.append(_hook("user-prompt-submit", ask, env))
        start = perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        python_s.append(perf_counter() - start)
    # What each prompt finds, whole: with room for every memory that clears the bar (not timed).
    said: list[str] = []
    before: list[str] = []
    uncut = {**env, "HYBRID_MEMORY_HOOK_PROMPT_TOKENS": "8000"}
    asked = [f"What did we decide about {topic} last time?" for topic in TOPICS]
    asks = [{"session_id": "bench", "cwd": str(asked_in), "prompt": prompt} for prompt in asked]
    for ask in asks:
        _hook("user-prompt-submit", ask, uncut, said)
    if earlier is not None:
        # The host builds what is injected: the earlier version's hook starts a host of its own version.
        stop_hosts(data_dir)
        for ask in asks:
            _hook("user-prompt-submit", ask, {**uncut, "PYTHONPATH": str(earlier)}, before)
        stop_hosts(data_dir)
    started: list[str] = []
    _hook("session-start", {"session_id": "bench", "cwd": str(asked_in)}, env, started)
    stop_hosts(data_dir)
    found = {topic: _shown(text) for topic, text in zip(TOPICS, said, strict=True)}
    return {
        "injected": {"session_start": _shown(started[0]), "prompts": found},
        **(
            {"same_as_earlier": compare(dict(zip(TOPICS, map(_shown, before), strict=True)), found)}
            if before
            else {}
        ),
        "first_hook_starting_the_host_s": round(cold, 2),
        "user_prompt_submit": _quantiles(prompt_s),
        "project_of_directory_us": round(naming_us, 1),
        "python_start_exit": _quantiles(python_s),
        f"capture_{turns}_turns_inline_s": round(capture_s, 2),
        "stop_one_new_turn_inline": _quantiles(stop_inline_s),
        "stop_one_new_turn_session_waits": _quantiles(stop_detached_s),
        f"remember_thread_same_{len(messages)}_messages_s": round(baseline_s, 2),
        f"capture_{turns}_turns_session_waits_s": round(detached_s, 3),
        f"capture_{turns}_turns_detached_done_s": round(detached_done_s, 2),
    }


def sessions(work: Path, runs: int) -> dict[str, object] | None:
    if runs <= 0:
        return None
    if not CLAUDE.is_file():
        print("tools/claude-code is not installed (npm ci --prefix tools/claude-code): sessions skipped")
        return None
    data_dir, cwd = work / "cc-data", git_project(work / "cc-project")
    homes = {"enabled": work / "home-enabled", "disabled": work / "home-disabled"}
    times: dict[str, list[float]] = {"enabled": [], "disabled": []}
    with messages_standin() as model:
        base = {**_env(data_dir), **OFFLINE, "ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "bench"}
        for name, home in homes.items():
            home.mkdir()
            env = {**base, "HOME": str(home)}
            subprocess.run([str(CLAUDE), "plugin", "marketplace", "add", str(REPO)], env=env, check=True)
            subprocess.run(
                [str(CLAUDE), "plugin", "install", "hybrid-memory@mcp-hybrid-memory"], env=env, check=True
            )
            if name == "disabled":
                subprocess.run(
                    [str(CLAUDE), "plugin", "disable", "hybrid-memory@mcp-hybrid-memory"], env=env, check=True
                )
        for i in range(runs + 1):  # the first pair warms both up (and starts the host) and is not counted
            for name in ("enabled", "disabled") if i % 2 else ("disabled", "enabled"):
                env = {**base, "HOME": str(homes[name])}
                start = perf_counter()
                subprocess.run(
                    [str(CLAUDE), "-p", f"Run {i}: we keep the {TOPICS[i % len(TOPICS)]} notes in docs/."],
                    cwd=cwd,
                    env=env,
                    check=True,
                    capture_output=True,
                    timeout=120,
                )
                if i:
                    times[name].append(perf_counter() - start)
    stop_hosts(data_dir)
    enabled, disabled = statistics.median(times["enabled"]), statistics.median(times["disabled"])
    return {
        "runs_each": runs,
        "enabled_median_s": round(enabled, 2),
        "disabled_median_s": round(disabled, 2),
        "added_s": round(enabled - disabled, 2),
        "enabled_s": [round(t, 2) for t in times["enabled"]],
        "disabled_s": [round(t, 2) for t in times["disabled"]],
    }


def compare(earlier: dict[str, list[str]], now: dict[str, list[str]]) -> dict[str, object]:
    """For each prompt: how many memories each version found, and whether they are the same."""
    rows = {
        topic: {
            "earlier": len(earlier[topic]),
            "now": len(lines),
            "same": sorted(earlier[topic]) == sorted(lines),
        }
        for topic, lines in now.items()
    }
    return {"all_same": all(r["same"] for r in rows.values()), "prompts": rows}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--prompts", type=int, default=40)
    parser.add_argument("--turns", type=int, default=500)
    parser.add_argument("--sessions", type=int, default=7)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results" / "plugin_hooks.json")
    parser.add_argument(
        "--earlier-src", type=Path, help="another version's src/: does its hook find the same?"
    )
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="hm-plugin-bench-"))
    load_before = os.getloadavg()
    try:
        results: dict[str, object] = {"hooks": hooks(work, args.prompts, args.turns, args.earlier_src)}
        if args.sessions > 0:  # 0: the hooks alone, without Claude Code
            results["sessions"] = sessions(work, args.sessions)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    results["load_average_before_after"] = [list(load_before), list(os.getloadavg())]
    results["cpus"] = os.cpu_count()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2))
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
