"""Two repositories that once shared a folder's name, separated; a repository moved, its memory followed.

Every command is a ``hybrid-memory`` process run in the repository's directory, with no ``--project``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import anyio
import pytest
from mcp import Client

from hybrid_memory.server import build_server
from tests.conftest import make_settings
from tests.e2e.claude_code import hook_env
from tests.e2e.test_hooks import HOOK
from tests.tools.helpers import call
from tests.unit.test_projects import repo

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

ALICE = "Alice's API answers in JSON with snake_case keys."
BOB = "Bob's API answers in XML with kebab-case keys."


def _cli(cwd: Path, data_dir: Path, *args: str) -> str:
    done = subprocess.run(
        [str(HOOK), *args], cwd=cwd, env=hook_env(data_dir), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


async def _written_the_old_way(data_dir: Path) -> None:
    """Both repositories' sessions in project ``api``, as every folder named api shared one."""
    settings = make_settings(data_dir).model_copy(update={"project": "api"})
    async with Client(build_server(settings)) as old:
        for thread, fact in (("s-alice", ALICE), ("s-bob", BOB)):
            message = {"role": "user", "content": fact, "id": "m1"}
            await call(old, "remember_thread", thread_id=thread, messages=[message])


def test_two_repositories_that_shared_a_name_are_separated_and_a_moved_one_keeps_its_memory(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    alice, bob = repo(tmp_path / "alice" / "api"), repo(tmp_path / "bob" / "api")
    anyio.run(_written_the_old_way, data_dir)

    first = _cli(alice, data_dir, "recall", "which format does the API answer in", "--limit", "5")
    assert ALICE in first
    assert BOB in first  # the first repository opened takes what its folder's name held
    assert BOB not in _cli(bob, data_dir, "recall", "which format does the API answer in")

    moved = _cli(bob, data_dir, "move-project", str(alice), "--thread", "s-bob")
    assert moved == f"moved 1 memories and 0 notes from {alice} to {bob}\n"
    in_alice = _cli(alice, data_dir, "recall", "which format does the API answer in")
    in_bob = _cli(bob / "src", data_dir, "recall", "which format does the API answer in")
    assert ALICE in in_alice
    assert BOB not in in_alice
    assert BOB in in_bob
    assert ALICE not in in_bob

    moved_to = tmp_path / "projects" / "api"
    moved_to.parent.mkdir()
    alice.rename(moved_to)
    assert ALICE not in _cli(moved_to, data_dir, "recall", "which format does the API answer in")
    done = _cli(moved_to, data_dir, "move-project", str(alice))
    assert done == f"moved 1 memories and 0 notes from {alice} to {moved_to}\n"
    assert ALICE in _cli(moved_to, data_dir, "recall", "which format does the API answer in")
