"""A session full of pastes, notifications and tool output, played through the real hooks: the next
session start holds its goal, what changed and what is open, and none of the noise."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hybrid_memory.integrations.config import estimate_tokens
from tests.e2e.claude_code import git_project, stop_hosts
from tests.e2e.stories import Session, Tool, Turn, play, session_start

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

GOAL = (
    "The CSV export button does nothing on Safari; make it work there and keep the file name with the "
    "date, as Chrome and Firefox users get it today."
)
NOISE = (
    "Traceback",
    "TypeError",
    "Read the output file",
    "/private/tmp",
    "[Image",
    "│",
    "─",
    "| file |",
    "Unknown skill",
    "$ npm",
    "codex.*",
)


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def test_the_next_session_start_has_the_goal_the_changes_and_no_noise(tmp_path: Path, data_dir: Path) -> None:
    repo = git_project(tmp_path / "shop")
    tests = Tool("Bash", {"command": "npm test -- export"}, "1 failed", failed=True)
    session = Session(
        "noisy-1",
        repo,
        [
            Turn(
                f"[Image #1]\n{GOAL}\nHere is the console:\n"
                "TypeError: undefined is not an object (evaluating 'blob.stream')\n"
                "    at exportCsv (web/export.js:41:12)",
                "I'll look at web/export.js.",
                (
                    Tool("Bash", {"command": "rg 'codex.*sessio' web"}, "web/export.js:12"),
                    Tool(
                        "Edit",
                        {"file_path": str(repo / "web/export.js"), "old_string": "a", "new_string": "b"},
                    ),
                    tests,
                ),
            ),
            Turn(
                "Read the output file to retrieve the result: /private/tmp/claude/tasks/b81.output",
                "The background test run failed on one case.",
            ),
            Turn(
                "╭──────────────────────────╮\n│ > npm test -- export      │\n╰──────────────────────────╯\n"
                "$ npm test -- export\n| file | status |\n|---|---|\n| export.js | failing |",
                "Still failing on Safari's Blob API; the fallback is left for later.",
            ),
        ],
    )
    assert play(session, data_dir, tmp_path / "transcripts").errors == []

    start = session_start(repo, "noisy-2", data_dir)
    assert f"Goal: {GOAL}" in start
    assert "edited web/export.js" in start
    assert "tests failing: npm test -- export" in start
    assert [(marker, line) for line in start.splitlines() for marker in NOISE if marker in line] == []
    assert estimate_tokens(start) <= 800
