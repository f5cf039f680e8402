"""A new session starts knowing the project's rules: a scripted coding story through the real hooks.

Every hook is a ``hybrid-memory hook <event>`` process reading Claude Code's payload, against a
real host with the real embedding model; the transcripts are in Claude Code's JSON Lines shape.
No model writes anything: the notes come from the sessions themselves.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from hybrid_memory.host.client import connect
from hybrid_memory.integrations.config import estimate_tokens
from tests.e2e.claude_code import git_project, stop_hosts
from tests.e2e.stories import Session, Tool, Turn, ask, play, session_start

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

FILLER = {"done.", "checking.", "let me look.", "ok", "ok.", "on it."}
REPEATED = "How do I regenerate the OpenAPI client after changing the billing schema?"
ANSWER = (
    "Run `make openapi` from the repository root: it rebuilds clients/billing from openapi/billing.yaml. "
    "Commit the generated files with the schema change."
)
TAG = re.compile(r"<[a-z_-]+>")
CITED = re.compile(r"^- \[memory:[0-9a-f-]+\] ")


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def _story(repo: Path) -> list[Session]:
    make_test = Tool("Bash", {"command": "make test", "description": "Run the tests"}, "42 passed in 3.1s")
    return [
        Session(
            "s1-rules",
            repo,
            [
                Turn(
                    "<ide_opened_file>The user opened the file /srv/shop/billing/models.py in the IDE. "
                    "This may or may not be related to the current task.</ide_opened_file>"
                    "We use Postgres 16 for billing, not MySQL. Tests run with `make test`. "
                    "Never push to main directly.",
                    "Understood: billing stays on Postgres 16, I run `make test` before anything is "
                    "pushed, and changes go through a branch and a pull request.",
                    (make_test,),
                ),
                Turn(
                    "Add an index on invoices.customer_id.",
                    "Done.",
                    (
                        Tool(
                            "Edit",
                            {
                                "file_path": str(repo / "billing/migrations/0007_invoice_index.sql"),
                                "old_string": "",
                                "new_string": "CREATE INDEX ...",
                            },
                        ),
                        make_test,
                    ),
                ),
            ],
        ),
        Session(
            "s2-ttl",
            repo,
            [
                Turn(
                    "The auth tokens live far too long. Access tokens expire after 15 minutes, refresh "
                    "tokens after 30 days.",
                    "Checking.",
                    (Tool("Read", {"file_path": str(repo / "auth/tokens.py")}, "ACCESS_TTL = 3600"),),
                ),
                Turn(
                    "Yes, change it.",
                    "Set ACCESS_TTL to 15 minutes and REFRESH_TTL to 30 days in auth/tokens.py.",
                    (
                        Tool(
                            "Edit",
                            {
                                "file_path": str(repo / "auth/tokens.py"),
                                "old_string": "3600",
                                "new_string": "900",
                            },
                        ),
                        make_test,
                    ),
                ),
            ],
        ),
        Session(
            "s3-haiku",
            repo,
            [
                Turn(
                    "Write me a haiku about invoices.",
                    "Paper trails of debt / numbers folded into rows / the month closes soft",
                )
            ],
        ),
        *[
            Session(f"s{n}-repeat", repo, [Turn(REPEATED, ANSWER), Turn("ok thanks", "OK")])
            for n in (4, 5, 6)
        ],
    ]


def _lines(context: str) -> list[str]:
    return [line for line in context.splitlines() if line.strip()]


def _assert_clean(context: str) -> None:
    """Every item cited, no scaffolding tag, nothing twice."""
    items = [line for line in _lines(context) if line.startswith("- ")]
    assert items, context
    for line in items:
        assert CITED.match(line), line
        assert not TAG.search(line), line
    texts = [CITED.sub("", line).lower() for line in items]
    assert len(texts) == len(set(texts)), context


def test_the_seventh_session_starts_knowing_the_rules_and_the_current_database(
    tmp_path: Path, data_dir: Path
) -> None:
    repo = git_project(tmp_path / "shop")
    for session in _story(repo):
        played = play(session, data_dir, tmp_path / "transcripts")
        assert played.errors == [], played.errors

    start = session_start(repo, "s7-new", data_dir)
    _assert_clean(start)
    assert estimate_tokens(start) <= 800
    lowered = start.lower()
    for fact in ("postgres 16", "mysql", "make test", "never push to main", "15 minutes"):
        assert fact in lowered, (fact, start)
    with connect(data_dir, repo, timeout_s=60, start=False) as host:
        graph = host.call_tool("map_notes", {"limit": 50})
    assert graph["notes"] >= 3, graph
    assert graph["links"] >= 3, graph

    again = ask(repo, "s7-new", REPEATED, data_dir)
    _assert_clean(again)
    assert "make openapi" in again
    for line in _lines(again):
        assert CITED.sub("", line).strip().lower() not in FILLER, line

    both = ask(
        repo,
        "s7-new",
        "can I push the auth fix straight to main, and which database should the new invoices table go in?",
        data_dir,
    )
    assert "push to main" in both.lower(), both
    assert "Postgres 16" in both, both

    moved = Session(
        "s8-move",
        repo,
        [
            Turn(
                "We moved billing from Postgres 16 to CockroachDB last week; "
                "the new invoices table goes there too.",
                "Noted: billing runs on CockroachDB now.",
            )
        ],
    )
    assert play(moved, data_dir, tmp_path / "transcripts").errors == []
    start = session_start(repo, "s9-new", data_dir)
    _assert_clean(start)
    assert "CockroachDB" in start
    for line in _lines(start):
        assert "postgres 16" not in line.lower() or "cockroachdb" in line.lower(), line
    assert "make test" in start

    elsewhere = git_project(tmp_path / "garden-planner")
    other = session_start(elsewhere, "other-1", data_dir)
    for word in ("Postgres", "CockroachDB", "make test", "15 minutes", "openapi"):
        assert word not in other, other
    assert ask(elsewhere, "other-1", REPEATED, data_dir) == ""
