"""``hybrid-memory import-transcript`` on a short coding story: notes, entities and links appear, once."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hybrid_memory.host.client import connect
from tests.e2e.claude_code import hook_env, stop_hosts

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

HOOK = Path(sys.executable).parent / "hybrid-memory"
CWD = "/work/billing"
SESSION = "7c1e9a2b-story"


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def _line(uuid: str, kind: str, content: Any, second: int) -> str:
    return json.dumps(
        {
            "type": kind,
            "uuid": uuid,
            "timestamp": f"2026-11-20T10:00:{second:02d}.000Z",
            "cwd": CWD,
            "sessionId": SESSION,
            "message": {"role": kind, "content": content},
        }
    )


STORY = [
    _line(
        "u1",
        "user",
        "Add an invoices table. We use Postgres 16 for billing, not MySQL. Never push to main directly.",
        1,
    ),
    _line(
        "a1",
        "assistant",
        [
            {"type": "text", "text": "I'll add the migration."},
            {
                "type": "tool_use",
                "id": "t1",
                "name": "Read",
                "input": {"file_path": f"{CWD}/src/billing/models.py"},
            },
            {
                "type": "tool_use",
                "id": "t2",
                "name": "Edit",
                "input": {"file_path": f"{CWD}/src/billing/models.py"},
            },
            {"type": "tool_use", "id": "t3", "name": "Bash", "input": {"command": "make test"}},
        ],
        2,
    ),
    _line(
        "r1",
        "user",
        [
            {"type": "tool_result", "tool_use_id": "t1", "content": "class Invoice: ..."},
            {"type": "tool_result", "tool_use_id": "t2", "content": "ok"},
            {"type": "tool_result", "tool_use_id": "t3", "content": "12 passed"},
        ],
        3,
    ),
    _line("u2", "user", "Tests run with `make test`. I prefer one migration per table.", 4),
    _line("a2", "assistant", "Done: the invoices table is in src/billing/models.py and the tests pass.", 5),
]


def _graph(data_dir: Path) -> tuple[int, int, list[str]]:
    with connect(data_dir, Path(CWD), timeout_s=60, start=False) as host:
        shape = host.call_tool("map_notes", {"limit": 50, "max_tokens": 8000})
    notes = [n["content"] for n in shape["hubs"] + shape["orphans"]]
    return shape["notes"], shape["links"], notes


def test_import_of_a_coding_story_fills_the_graph_and_again_adds_nothing(
    tmp_path: Path, data_dir: Path
) -> None:
    project_dir = tmp_path / "projects" / "-work-billing"
    project_dir.mkdir(parents=True)
    (project_dir / f"{SESSION}.jsonl").write_text("\n".join(STORY) + "\n")
    command = [str(HOOK), "import-transcript", str(project_dir)]
    subprocess.run(command, env=hook_env(data_dir), capture_output=True, text=True, timeout=300, check=True)

    notes, links, contents = _graph(data_dir)
    assert {
        "We use Postgres 16 for billing, not MySQL.",
        "Never push to main directly.",
        "Tests run with `make test`.",
        "I prefer one migration per table.",
        "File src/billing/models.py",
        "Command make test",
        "Service Postgres",
    } <= set(contents)
    assert links >= 3

    # Read again by a new host: nothing is added or repeated.
    stop_hosts(data_dir)
    subprocess.run(command, env=hook_env(data_dir), capture_output=True, text=True, timeout=300, check=True)
    assert _graph(data_dir) == (notes, links, contents)


PT_SESSION = "3f9d0c11-pt"
PT_STORY = [
    _line(
        "p1",
        "user",
        "<ide_opened_file>The user opened the file /work/billing/src/api/routes.py in the IDE. "
        "This may or may not be related to the current task.</ide_opened_file>"
        "Nunca faça deploy na sexta-feira. Usamos FastAPI para a API de faturamento.",
        1,
    ),
    _line(
        "p2",
        "assistant",
        [
            {"type": "text", "text": "Entendido. Vou olhar as rotas."},
            {
                "type": "tool_use",
                "id": "k1",
                "name": "Read",
                "input": {"file_path": f"{CWD}/src/api/routes.py"},
            },
        ],
        2,
    ),
    _line("p3", "user", [{"type": "tool_result", "tool_use_id": "k1", "content": "router = APIRouter()"}], 3),
    _line("p4", "user", "<system-reminder>Todo list is empty.</system-reminder>pode fazer as alterações", 4),
    _line("p5", "user", "pode fazer as alterações", 5),
]


def test_a_session_in_another_language_with_ide_scaffolding_gives_clean_notes(
    tmp_path: Path, data_dir: Path
) -> None:
    project_dir = tmp_path / "projects" / "-work-billing"
    project_dir.mkdir(parents=True)
    lines = [line.replace(SESSION, PT_SESSION) for line in PT_STORY]
    (project_dir / f"{PT_SESSION}.jsonl").write_text("\n".join(lines) + "\n")
    command = [str(HOOK), "import-transcript", str(project_dir)]
    subprocess.run(command, env=hook_env(data_dir), capture_output=True, text=True, timeout=300, check=True)
    _, links, contents = _graph(data_dir)
    assert {
        "Nunca faça deploy na sexta-feira.",
        "Usamos FastAPI para a API de faturamento.",
        "File src/api/routes.py",
    } <= set(contents)
    assert links >= 3
    assert not [c for c in contents if "<" in c or "IDE" in c or "pode fazer" in c or "reminder" in c]
