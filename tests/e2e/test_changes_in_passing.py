"""Changes said in passing, through real capture: the hooks of a scripted story, the real model and host.

A move said as a heads-up, mid-sentence or in the assistant's confirmation supersedes the note it
replaces; a new value of a setting is an update; the assistant saying back what the user said
becomes no note of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hybrid_memory.host.client import connect
from tests.e2e.claude_code import git_project, stop_hosts
from tests.e2e.stories import Session, Turn, play, session_start

pytestmark = [pytest.mark.subprocess, pytest.mark.model]


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def _notes(data_dir: Path, repo: Path) -> list[dict[str, Any]]:
    with connect(data_dir, repo, timeout_s=60, start=False) as host:
        found = host.call_tool(
            "recall_memory",
            {
                "query": "billing database queue tokens tests main",
                "kinds": ["note"],
                "limit": 50,
                "include_invalid": True,
                "with_context": False,
                "max_tokens": 8000,
            },
        )["results"]
    return [n for n in found if n.get("note_type") in ("decision", "fact", "preference")]


def _live(notes: list[dict[str, Any]], words: str) -> list[str]:
    return [n["text"] for n in notes if words.lower() in n["text"].lower() and n.get("valid_to") is None]


def test_moves_said_in_passing_supersede_and_a_restatement_makes_no_note(
    tmp_path: Path, data_dir: Path
) -> None:
    repo = git_project(tmp_path / "shop")
    story = [
        Session(
            "p1",
            repo,
            [
                Turn(
                    "We use Postgres 16 for billing, not MySQL. Tests run with `make test`. "
                    "Never push to main directly. Auth tokens expire after 15 minutes in the deploy "
                    "pipeline. Our job queue runs on RabbitMQ.",
                    "Understood: billing stays on Postgres 16, I run `make test`, "
                    "and changes go through pull requests, never straight to main.",
                )
            ],
        ),
        Session(
            "p2",
            repo,
            [
                Turn(
                    "Heads-up: we moved billing from Postgres 16 to CockroachDB last week; "
                    "the Postgres cluster is gone.",
                    "Noted.",
                ),
                Turn(
                    "Point the invoice worker at the new queue please.",
                    "Done. Since we switched the job queue from RabbitMQ to SQS, "
                    "the worker now reads from SQS.",
                ),
                Turn("Auth tokens expire after 30 minutes in the deploy pipeline.", "OK."),
            ],
        ),
    ]
    for session in story:
        assert play(session, data_dir, tmp_path / "transcripts").errors == []

    notes = _notes(data_dir, repo)
    assert _live(notes, "We use Postgres 16 for billing") == []
    assert _live(notes, "CockroachDB") != []
    assert _live(notes, "Our job queue runs on RabbitMQ") == []
    assert _live(notes, "15 minutes") == []
    assert _live(notes, "30 minutes") != []
    assert [n["text"] for n in notes if "understood" in n["text"].lower() or "stays on" in n["text"]] == []

    start = session_start(repo, "p3", data_dir)
    assert "CockroachDB" in start
    for line in start.splitlines():
        assert "postgres 16" not in line.lower() or "cockroachdb" in line.lower(), line
        assert "15 minutes" not in line, line
