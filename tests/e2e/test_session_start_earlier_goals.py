"""Three sessions played through the real hooks: the next session start holds the last one's digest
and, one line each, what the two before it set out to do."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from hybrid_memory.integrations.config import estimate_tokens
from tests.e2e.claude_code import git_project, stop_hosts
from tests.e2e.stories import Session, Turn, play, session_start

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

GOALS = (
    "Add a dark mode toggle to the settings page and remember the choice per user account.",
    "Make the invoice PDF export include the customer's VAT number under their address block.",
    "Speed up the product search page, it takes four seconds to load the first results.",
)


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def test_the_next_session_start_names_the_goals_of_the_sessions_before_the_last(
    tmp_path: Path, data_dir: Path
) -> None:
    repo = git_project(tmp_path / "shop")
    for n, goal in enumerate(GOALS):
        session = Session(f"past-{n}", repo, [Turn(goal, "On it: I'll start with the code that does this.")])
        assert play(session, data_dir, tmp_path / "transcripts").errors == []

    start = session_start(repo, "next", data_dir)
    last, before = start.split("Sessions before it:")
    assert f"Goal: {GOALS[2]}" in last
    earlier = [line for line in before.strip().splitlines() if line.startswith("- [memory:")]
    assert [GOALS[1] in earlier[0], GOALS[0] in earlier[1]] == [True, True]  # newest first, one line each
    assert len(earlier) == 2
    assert estimate_tokens(start) <= 800
