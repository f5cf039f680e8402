"""``hybrid-memory import-transcript`` over every transcript shape, through the real command and host.

The fixtures (``tests/fixtures/transcripts``) hold a session of each Claude Code and Codex
CLI version's format, sub-agent files beside and under them, and lines that are not JSON.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.claude_code import hook_env, stop_hosts
from tests.unit.test_transcript_shapes import FIXTURES, SCAFFOLDING

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

COMMAND = Path(sys.executable).parent / "hybrid-memory"
STORED = [
    "The ledger stores amounts as integer cents, never floats.",
    "Understood: integer cents everywhere. I'll check the money module.\n(edited ledger/money.py)",
    "Tiles are cached for 24 hours in Redis, keyed by z/x/y.",
    "(tests failed: uv run pytest -q tests/tiles)",
    "Numbering restarts each fiscal year.\n(edited billing/numbers.py)",
    "Orders over 500 EUR need a second approver.",
    "(edited search/schedule.py)",
    "(tests passed: cargo test -p indexer)",
]


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def _run(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(COMMAND), *args], env=hook_env(data_dir), capture_output=True, text=True, timeout=300, check=True
    )


def _exported(data_dir: Path, tmp_path: Path) -> list[dict[str, object]]:
    target = tmp_path / "export.jsonl"
    _run(data_dir, "export", "--all-projects", "--quiet", str(target))
    items = [json.loads(line) for line in target.read_text().splitlines()]
    return [item for item in items if item.get("item") == "memory"]


def test_every_shape_imports_once_and_no_scaffolding_is_stored(tmp_path: Path, data_dir: Path) -> None:
    transcripts = tmp_path / "transcripts"
    shutil.copytree(FIXTURES, transcripts)

    first = _run(data_dir, "import-transcript", str(transcripts))
    assert first.stdout.splitlines()[0] == "imported 5 sessions: 21 messages stored, 0 already remembered"
    assert "4 not JSON" in first.stdout.splitlines()[1]
    assert "skipped 2 sub-agent transcripts" in first.stderr
    assert (
        "e4a1b2c3-9d8e-4f70-8a6b-5c4d3e2f1a00: 2 messages (2 stored) from /c/Users/ada/work/Billing"
        in first.stderr
    )

    again = _run(data_dir, "import-transcript", str(transcripts))
    assert again.stdout.splitlines()[0] == "imported 5 sessions: 0 messages stored, 0 already remembered"
    # A new host knows no position: it starts at each session's last message stored, read again.
    stop_hosts(data_dir)
    anew = _run(data_dir, "import-transcript", str(transcripts))
    assert anew.stdout.splitlines()[0] == "imported 5 sessions: 0 messages stored, 5 already remembered"

    memories = _exported(data_dir, tmp_path)
    messages = [m for m in memories if m["kind"] == "message"]
    texts = [str(m["text"]) for m in messages]
    assert len(texts) == 21
    assert [s for s in STORED if s not in texts] == []
    stored = "\n".join(str(m["text"]) for m in memories)  # what capture made of them too: notes, digests
    assert [marker for marker in SCAFFOLDING if marker in stored] == []
    threads = {str(m["thread_id"]) for m in messages}
    assert threads == {
        "0b6f2c1e-7d3a-4e55-9a21-3c8f1d2e4a01",
        "7c2d9e40-51b8-4f0a-b6e3-2a9d0c4f8e12",
        "e4a1b2c3-9d8e-4f70-8a6b-5c4d3e2f1a00",
        "5f3e2d1c-0b9a-4c8d-8e7f-6a5b4c3d2e10",
        "019a7b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b",
    }


WANDERING = FIXTURES.parent / "wandering"


def test_a_redacted_date_and_an_agent_that_wandered_import_whole_into_the_project_it_started_in(
    tmp_path: Path, data_dir: Path
) -> None:
    done = _run(data_dir, "import-transcript", str(WANDERING))
    assert done.stdout.splitlines()[0] == "imported 2 sessions: 11 messages stored, 0 already remembered"
    assert "messages with an unreadable timestamp, dated by their neighbours or the file: 3" in done.stdout
    assert "3 unreadable timestamps dated by their neighbours" in done.stderr

    messages = [m for m in _exported(data_dir, tmp_path) if m["kind"] == "message"]
    projects = {str(m["thread_id"]): set() for m in messages}
    for m in messages:
        projects[str(m["thread_id"])].add(str(m["project"]))
    assert projects == {
        "a3d91e07-5c2b-4f18-9e6a-0b7c4d2e8f13": {"/home/u/Projects/weather-cli"},
        "5e8b2f40-1a7c-4d93-8b25-c6f0e9a1d374": {"/home/u/Documents/Claude"},
    }
    redacted = [m for m in messages if m["thread_id"] == "a3d91e07-5c2b-4f18-9e6a-0b7c4d2e8f13"]
    assert {str(m["created_at"])[:10] for m in redacted} == {"2026-01-14"}
    texts = "\n".join(str(m["text"]) for m in messages)
    for echo in ("Unknown skill", "permission check failed", "ralph-loop"):
        assert echo not in texts


def test_a_session_whose_agent_cd_d_away_is_captured_by_its_hooks_into_the_project_it_started_in(
    tmp_path: Path, data_dir: Path
) -> None:
    # The fixture's folders, made real here: a start directory that does not exist names no project.
    started = tmp_path / "Documents" / "Claude"
    (started / "agents").mkdir(parents=True)
    transcript = tmp_path / "5e8b2f40-1a7c-4d93-8b25-c6f0e9a1d374.jsonl"
    lines = (WANDERING / transcript.name).read_text().replace("/home/u/Documents/Claude", str(started))
    transcript.write_text(lines)
    payload = {
        "session_id": "5e8b2f40-1a7c-4d93-8b25-c6f0e9a1d374",
        "transcript_path": str(transcript),
        "cwd": str(started / "agents"),  # where the agent is when the turn ends
        "hook_event_name": "Stop",
        "stop_hook_active": False,
    }
    done = subprocess.run(
        [str(COMMAND), "hook", "stop"],
        input=json.dumps(payload),
        env=hook_env(data_dir, HYBRID_MEMORY_HOOK_DETACH="0"),
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert done.stderr == ""
    messages = [m for m in _exported(data_dir, tmp_path) if m["kind"] == "message"]
    assert len(messages) == 6
    assert {str(m["project"]) for m in messages} == {str(started.resolve())}
