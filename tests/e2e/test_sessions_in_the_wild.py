"""Hand-made Claude Code sessions as they come in the wild, imported through a real host.

Five projects in Portuguese, Spanish, German, English and a mix, with what Claude Code puts
in the user's place: IDE tags, slash commands and their output, system reminders, hook
echoes, interrupts, compaction summaries, pasted logs and code (``tests/fixtures/wild``).
What capture makes of them is checked against what each session says: the notes expected
are listed per project, and nothing else is a note; no note and no SessionStart line holds
scaffolding.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hybrid_memory.host.client import connect
from tests.e2e.claude_code import hook_env, stop_hosts
from tests.e2e.stories import HOOK, session_start

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

WILD = Path(__file__).parents[1] / "fixtures" / "wild"
EXPECTED = {
    "/home/lucas/dev/loja-api": {
        "Usamos Django 5 com PostgreSQL, não SQLite.",
        "Nunca faça commit com DEBUG = True.",
        "Prefiro mensagens de commit em português.",
        "File pedidos/views.py",
        "File pedidos/cupons.py",
        "Command pytest",
        "Service Postgres",
        "Service SQLite",
    },
    "/Users/marta/proyectos/reservas-web": {
        "Siempre usa pnpm, nunca npm.",
        "El frontend está hecho con Next.js 14 y las reservas se guardan en Supabase.",
        "File src/lib/fechas.ts",
        "Command pnpm test",
        "Service Supabase",
    },
    "/home/jonas/src/lager-service": {
        "Wir deployen nur über GitHub Actions, nie manuell mit kubectl.",
        "Die Datenbank ist MariaDB 10.11.",
        "File lager/worker.py",
        "File /app/lager/worker.py",  # the pasted traceback's path, as it was written
        "Command uv run pytest",
        "Service MariaDB",
    },
    "/home/priya/work/ingest": {
        "Never delete raw files.",
        "Signed upload URLs expire after 15 minutes.",
        "File ingest/loader.py",
        "Service S3",
    },
    "/srv/projetos/painel-frota": {
        "We switched from Mapbox to Leaflet because of the pricing.",
        "I prefer small PRs with one concern each.",
        "File CLAUDE.md",
        "Command git mv",
    },
}
SCAFFOLDING = [
    "<",  # any tag left
    "opened the file",
    "selected the lines",
    "Request interrupted",
    "Caveat:",
    "/model",
    "Set model to",
    "claudeMd",
    "Always answer in English",  # a CLAUDE.md rule a system reminder carried
    "Never edit generated files",
    "/compact",
    "Compacted",
    "being continued",
    "backfill on weekdays",  # rules only a compaction summary states
    "tabs over spaces",
    "We always deploy on Mondays",
    "git status",
    "On branch",
    "Stop hook feedback",
    "F401",
    "Possibly relevant memory",
    "run the migrations before the worker",
    "/init",
    "/review-pr",
    "task-notification",
    "Background command",
    "never from the API",  # a comment in pasted code
    "never retry on startup",  # a line of a pasted log
]


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def _notes(data_dir: Path, cwd: str) -> tuple[set[str], int]:
    with connect(data_dir, Path(cwd), timeout_s=60, start=False) as host:
        shape = host.call_tool("map_notes", {"limit": 50, "max_tokens": 8000})
    contents = {n["content"] for n in shape["hubs"] + shape["orphans"]}
    return {c for c in contents if not c.startswith("Session ")}, shape["links"]


def test_sessions_in_the_wild_leave_true_notes_and_no_scaffolding(tmp_path: Path, data_dir: Path) -> None:
    projects = tmp_path / "projects"
    shutil.copytree(WILD, projects)
    command = [str(HOOK), "import-transcript", str(projects)]
    done = subprocess.run(command, env=hook_env(data_dir), capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0] == "imported 5 sessions: 33 messages stored, 0 already remembered"

    found = {cwd: _notes(data_dir, cwd) for cwd in EXPECTED}
    starts = {cwd: session_start(Path(cwd), f"next-{i}", data_dir) for i, cwd in enumerate(EXPECTED)}

    assert {cwd: notes for cwd, (notes, _) in found.items()} == EXPECTED
    assert all(links >= 4 for _, links in found.values())
    told = [*(n for notes, _ in found.values() for n in notes), *"\n".join(starts.values()).splitlines()]
    told = [
        line for line in told if not line.startswith("Long-term memory of this project (cite as [memory:")
    ]
    assert [(marker, line) for line in told for marker in SCAFFOLDING if marker in line] == []
    # What SessionStart says each project decided, and what was really changed.
    assert (
        "Wir deployen nur über GitHub Actions, nie manuell mit kubectl."
        in starts["/home/jonas/src/lager-service"]
    )
    # The goal (the first request) is what the notes above say already; the log pasted later is no line.
    assert "Goal:" not in starts["/home/jonas/src/lager-service"]
    assert "Log vom Worker" not in starts["/home/jonas/src/lager-service"]
    ingest = starts["/home/priya/work/ingest"]
    assert "Never delete raw files." in ingest
    assert "edited ingest/loader.py" not in ingest  # the edit was interrupted: the file is unchanged
