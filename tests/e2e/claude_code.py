"""The real Claude Code CLI (``tools/claude-code``) run offline, and the memory hosts our hooks start.

Claude Code talks to the loopback stand-in of the Messages API
(:mod:`tests.e2e.messages_standin`) under a throwaway ``HOME``; these variables keep it
from calling anything else (telemetry, error reports, auto-update, feature flags).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.conftest import REPO, model_dir

CLAUDE = REPO / "tools" / "claude-code" / "node_modules" / ".bin" / "claude"
OFFLINE = {
    "DISABLE_TELEMETRY": "1",
    "DISABLE_ERROR_REPORTING": "1",
    "DISABLE_AUTOUPDATER": "1",
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
}
SESSION_TIMEOUT_S = 120


def require_claude() -> Path:
    """The pinned CLI, or a skip (a failure under CI) saying how to install it."""
    if CLAUDE.is_file():
        return CLAUDE
    reason = "Claude Code is not installed in tools/claude-code: npm ci --prefix tools/claude-code"
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def hook_env(data_dir: Path, **extra: str) -> dict[str, str]:
    """The environment of a session (and so of its hooks and MCP server): our command first on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HYBRID_MEMORY_", "QDRANT_", "NEO4J_"))}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env.update(
        HYBRID_MEMORY_DATA_DIR=str(data_dir),
        HYBRID_MEMORY_EMBEDDING_MODEL_PATH=str(model_dir()),
        HYBRID_MEMORY_HOOK_TIMEOUT_S="60",
    )
    env.update(extra)
    return env


@dataclass
class ClaudeCode:
    """The CLI under a throwaway HOME, pointed at a stand-in of the Messages API."""

    home: Path
    base_url: str
    env: dict[str, str]

    def run(
        self, *args: str, cwd: Path | None = None, check: bool = True, env: dict[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        env = {**self.env, **(env or {}), **OFFLINE, "HOME": str(self.home)}
        env.update(ANTHROPIC_BASE_URL=self.base_url, ANTHROPIC_API_KEY="test-key")
        done = subprocess.run(
            [str(CLAUDE), *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            text=True,
            timeout=SESSION_TIMEOUT_S,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"claude {' '.join(args)} exited {done.returncode}: {done.stderr[-2000:]}")
        return done

    def install_plugin(self) -> None:
        self.run("plugin", "marketplace", "add", str(REPO))
        self.run("plugin", "install", "hybrid-memory@mcp-hybrid-memory")


def git_project(path: Path) -> Path:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True, timeout=30)
    return path


def host_pids(data_dir: Path) -> list[int]:
    """The headless hosts serving ``data_dir`` (our hooks started them; the path is the test's own)."""
    pids = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            argv = (proc / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"--headless" in argv and os.fsencode(data_dir) in argv:
            pids.append(int(proc.name))
    return pids


def message_counts(data_dir: Path, cwd: Path) -> dict[str, int]:
    """Message memories per thread of ``cwd``'s project (a captured thread holds its digest and notes too),
    counted in what ``hybrid-memory export`` writes of the project: every one, however many a thread holds."""
    from hybrid_memory.projects import project_name, root_uri

    project = project_name(root_uri(cwd))  # what the hooks' host names the project of a session in ``cwd``
    assert project is not None
    with tempfile.TemporaryDirectory() as folder:
        exported = Path(folder) / "export.jsonl"
        subprocess.run(
            [
                str(Path(sys.executable).parent / "hybrid-memory"),
                "export",
                "--quiet",
                "--project",
                project,
                str(exported),
            ],
            env=hook_env(data_dir),
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        lines = [json.loads(line) for line in exported.read_text().splitlines()[1:]]
    counts: dict[str, int] = {}
    for item in lines:
        if item.get("item") == "memory" and item.get("kind") == "message":
            counts[item["thread_id"]] = counts.get(item["thread_id"], 0) + 1
    return counts


def stop_hosts(data_dir: Path, timeout_s: float = 60) -> None:
    """Stop the data dir's headless hosts (they close their stores) and wait until they are gone."""
    pids = host_pids(data_dir)
    for pid in pids:
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout_s
    while any(Path(f"/proc/{pid}").exists() and not _zombie(pid) for pid in pids):
        if time.monotonic() > deadline:
            raise AssertionError(f"the memory hosts {pids} did not exit within {timeout_s:g} s")
        time.sleep(0.05)


def _zombie(pid: int) -> bool:
    try:
        return " Z " in Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
