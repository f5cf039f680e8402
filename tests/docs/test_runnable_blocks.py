"""Every shell block in the README and docs/ either runs, or says here why it cannot.

A block marked ``<!-- runnable -->`` on the line before its fence is run with bash
(``-e``, ``-o pipefail``), the blocks of one page in order, in a temporary directory that
holds the checkout's files (links to them) and its own data directory, with the installed
``hybrid-memory`` and ``python`` first on PATH. Any other shell block must match one of
``NOT_RUNNABLE``, which says why it cannot run in a test.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.blocks import REPO, Block, pages, shell_blocks

BLOCK_TIMEOUT_S = 60
_ENV = r"^(?:[A-Z_]+=\S+ )*(?:nice )?"  # a command's leading variables and nice

NOT_RUNNABLE: dict[str, str] = {
    r"pip install|python3 -m venv": (
        "installs the package into a new venv; the test runs in the installed checkout"
    ),
    r"^bash scripts/test\.sh": "runs the whole suite, this test included",
    r"^claude ": "needs Claude Code",
    r"docker compose": "needs a Docker engine",
    rf"{_ENV}hybrid-memory serve(?! --transport http --port 99999)": (
        "serves until stopped; tests/e2e/test_transports.py runs it over stdio and HTTP"
    ),
    rf"{_ENV}python bench/": "a benchmark: minutes of CPU, some of it on the LoCoMo dataset",
    rf"{_ENV}hybrid-memory eval locomo": (
        "a benchmark over the whole LoCoMo dataset; tests/e2e/test_eval_smoke.py runs a slice"
    ),
    rf"{_ENV}hybrid-memory eval longmemeval": (
        "a benchmark: minutes of embedding per LongMemEval question, on a dataset beside the checkout"
    ),
    r"^pytest -m neo4j": (
        "runs test suites (ArcadeDB's JVM, or a real Neo4j it would empty): the suite itself runs them"
    ),
    rf"{_ENV}hybrid-memory view": (
        "serves the viewer until stopped; tests/e2e/test_viewer_command.py opens it in Chromium"
    ),
    rf"{_ENV}hybrid-memory graph --html": (
        "tests/e2e/test_graph_picture.py writes the page from a real store and measures it in Chromium"
    ),
    r"npm install --package-lock-only": (
        "fetches from the npm registry and rewrites the vendored files; "
        "tests/unit/test_vendored_layout.py checks them against the lock file"
    ),
    r"^\$ hybrid-memory": (
        "a terminal session shown with its output, a server running in the background; "
        "tests/e2e/test_cli_joins_server.py runs these commands against running servers"
    ),
    rf"{_ENV}hybrid-memory sync (?!memory\.git)": (
        "a remote the test cannot reach; tests/e2e/test_sync.py syncs two machines through a bare repository"
    ),
    r"^pip uninstall": "removes the package this test runs",
    rf"{_ENV}hybrid-memory (?:un)?install ": (
        "edits the agent's files in your home; tests/e2e/test_agent_install.py runs it under a "
        "throwaway home against each agent's real CLI"
    ),
    r"^rm -rf ~/": "deletes the user's own data directory",
    r"settings_doc > docs/configuration\.md": (
        "rewrites a tracked file; tests/docs/test_configuration_page.py checks the same output"
    ),
}


def _all_blocks() -> list[Block]:
    return [block for page in pages() for block in shell_blocks(page)]


def _reasons(block: Block) -> list[str]:
    return [
        reason for pattern, reason in NOT_RUNNABLE.items() if re.search(pattern, block.text, re.MULTILINE)
    ]


def test_every_shell_block_runs_or_says_why_not() -> None:
    unexplained = [str(b) for b in _all_blocks() if not b.runnable and not _reasons(b)]
    assert unexplained == [], (
        "these shell blocks are neither marked <!-- runnable --> nor matched by NOT_RUNNABLE "
        f"in tests/docs/test_runnable_blocks.py: {unexplained}"
    )


def test_every_reason_not_to_run_still_applies() -> None:
    blocks = [b for b in _all_blocks() if not b.runnable]
    stale = [p for p in NOT_RUNNABLE if not any(re.search(p, b.text, re.MULTILINE) for b in blocks)]
    assert stale == [], f"NOT_RUNNABLE patterns that match no block any more: {stale}"


def _workdir(tmp_path: Path) -> Path:
    """A directory that looks like the checkout (links) but keeps what the blocks write."""
    work = tmp_path / "work"
    work.mkdir()
    for entry in REPO.iterdir():
        if entry.name not in {".git", ".venv"}:
            (work / entry.name).symlink_to(entry)
    return work


def _environment(tmp_path: Path) -> dict[str, str]:
    keep = {"HYBRID_MEMORY_EMBEDDING_MODEL_PATH"}
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYBRID_MEMORY_") or k in keep}
    env["HYBRID_MEMORY_DATA_DIR"] = str(tmp_path / "data")
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


RUNNABLE_PAGES = sorted({b.page for b in _all_blocks() if b.runnable})


@pytest.mark.subprocess
@pytest.mark.model
@pytest.mark.parametrize("page", RUNNABLE_PAGES)
def test_runnable_blocks_run(page: str, tmp_path: Path) -> None:
    work, env = _workdir(tmp_path), _environment(tmp_path)
    for block in (b for b in shell_blocks(REPO / page) if b.runnable):
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", block.text],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=BLOCK_TIMEOUT_S,
            check=False,
        )
        assert done.returncode == 0, (
            f"the runnable block at {block} failed with exit code {done.returncode}:\n{block.text}"
            f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
        )
