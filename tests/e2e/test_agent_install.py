"""``hybrid-memory install <agent>`` and ``uninstall``, checked by each agent's own CLI (from npm).

For each agent, under a throwaway HOME that already holds the user's own settings (with a
comment): after install the agent's ``mcp list`` shows the memory (connected, where the
agent checks); a second install changes no file; uninstall takes it out and gives back the
user's settings byte for byte. The host the server joins is started first, so a cold
start on a busy machine does not outlast an agent's short ``mcp list`` timeout.
"""

from __future__ import annotations

import json
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.agent_clis import (
    HYBRID_MEMORY,
    agent_env,
    codex_provider,
    files,
    gemini_settings,
    hybrid_memory,
    opencode_settings,
    require,
    run,
)
from tests.e2e.claude_code import git_project, stop_hosts

pytestmark = [pytest.mark.agent_cli, pytest.mark.subprocess, pytest.mark.model]


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return git_project(tmp_path / "work" / "shop")


def _warm(env: dict[str, str], project: Path) -> None:
    """Start the data dir's host as a session's first hook does (it outlives the hook)."""
    payload = json.dumps({"session_id": "warm-up", "cwd": str(project)})
    done = subprocess.run(
        [str(HYBRID_MEMORY), "hook", "session-start"],
        input=payload,
        env=env,
        cwd=project,
        capture_output=True,
        text=True,
        timeout=180,
        check=True,
    )
    assert not done.stderr, done.stderr


def _listed(done: subprocess.CompletedProcess[str]) -> str:
    """What ``mcp list`` printed: Gemini CLI writes its list to stderr."""
    return re.sub(r"\x1b\[[0-9;]*m", "", done.stdout + done.stderr)  # without colours


def _install_twice(env: dict[str, str], home: Path, project: Path, agent: str) -> str:
    """Install, then install again (which must change no file); the second one's report."""
    hybrid_memory(env, project, "install", agent)
    before = files(home)
    again = hybrid_memory(env, project, "install", agent).stdout
    assert files(home) == before, "the second install changed a file"
    return again


def test_codex_lists_the_memory_after_install_and_not_after_uninstall(
    tmp_path: Path, data_dir: Path, project: Path
) -> None:
    codex = require("codex")
    home = tmp_path / "home"
    own = codex_provider(home, "http://127.0.0.1:9")
    env = agent_env(home, data_dir)

    again = _install_twice(env, home, project, "codex")
    listed = _listed(run([str(codex), "mcp", "list"], env, project))
    hybrid_memory(env, project, "uninstall", "codex")
    after = _listed(run([str(codex), "mcp", "list"], env, project))

    assert again == "codex already has hybrid-memory: nothing to change\n"
    assert re.search(
        rf"hybrid-memory\s+{re.escape(str(HYBRID_MEMORY))}\s+serve --detached-host.*enabled", listed
    )
    assert "hybrid-memory" not in after
    assert (home / ".codex" / "config.toml").read_text() == own
    assert not (home / ".codex" / "hooks.json").exists()


def test_gemini_lists_the_memory_connected_after_install_and_not_after_uninstall(
    tmp_path: Path, data_dir: Path, project: Path
) -> None:
    gemini = require("gemini")
    home = tmp_path / "home"
    own = gemini_settings(home, project)
    env = agent_env(home, data_dir)
    _warm(env, project)

    again = _install_twice(env, home, project, "gemini")
    listed = _listed(run([str(gemini), "mcp", "list"], env, project))
    hybrid_memory(env, project, "uninstall", "gemini")
    after = _listed(run([str(gemini), "mcp", "list"], env, project))

    assert again == "gemini already has hybrid-memory: nothing to change\n"
    assert f"✓ hybrid-memory: {HYBRID_MEMORY} serve --detached-host (stdio) - Connected" in listed
    assert "hybrid-memory" not in after
    assert (home / ".gemini" / "settings.json").read_text() == own


def test_opencode_lists_the_memory_connected_after_install_and_not_after_uninstall(
    tmp_path: Path, data_dir: Path, project: Path
) -> None:
    opencode = require("opencode")
    home = tmp_path / "home"
    own = opencode_settings(home, "http://127.0.0.1:9")
    env = agent_env(home, data_dir)
    _warm(env, project)

    again = _install_twice(env, home, project, "opencode")
    plugin = home / ".config" / "opencode" / "plugins" / "hybrid-memory.js"
    written = plugin.read_text()
    listed = _listed(run([str(opencode), "mcp", "list"], env, project))
    hybrid_memory(env, project, "uninstall", "opencode")
    after = _listed(run([str(opencode), "mcp", "list"], env, project))

    assert again == "opencode already has hybrid-memory: nothing to change\n"
    assert re.search(r"✓ hybrid-memory\s+connected", listed), listed
    assert f"const COMMAND = {str(HYBRID_MEMORY)!r}".replace("'", '"') in written
    assert "hybrid-memory" not in after
    assert (home / ".config" / "opencode" / "opencode.jsonc").read_text() == own
    assert not plugin.exists()


def test_claude_code_lists_the_plugin_connected_after_install_and_not_after_uninstall(
    tmp_path: Path, data_dir: Path, project: Path
) -> None:
    claude = require("claude-code")
    home = tmp_path / "home"
    home.mkdir()
    env = agent_env(home, data_dir)
    _warm(env, project)

    hybrid_memory(env, project, "install", "claude-code")
    before = files(home)
    again = hybrid_memory(env, project, "install", "claude-code").stdout
    unchanged = files(home) == before
    listed = _listed(run([str(claude), "mcp", "list"], env, project))
    hybrid_memory(env, project, "uninstall", "claude-code")
    after = _listed(run([str(claude), "mcp", "list"], env, project))

    assert again == "claude-code already has hybrid-memory: nothing to change\n"
    assert unchanged
    assert re.search(r"plugin:hybrid-memory:hybrid-memory: .*serve --detached-host - ✔ Connected", listed), (
        listed
    )
    assert "hybrid-memory" not in after
