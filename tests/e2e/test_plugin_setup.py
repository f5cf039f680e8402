"""The plugin from a fresh clone set up as the README says, run by a Claude Code whose PATH lacks the venv.

The clone is made of this checkout's last commit (what a user would clone), not of uncommitted changes.

The plugin's hooks and MCP server call ``plugins/hybrid-memory/bin/hybrid-memory``, which finds the
package in the clone's ``.venv`` (or on PATH, or through uv) and otherwise says how to fix it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.claude_code import ClaudeCode, git_project, require_claude, stop_hosts
from tests.e2e.messages_standin import messages_standin, request_text

pytestmark = [pytest.mark.claude_code, pytest.mark.subprocess, pytest.mark.model]

FACT = "The release train leaves every second Tuesday at 09:15 from the main branch."
QUESTION = "When does the release train leave, and from which branch?"
EVENTS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "Stop": "stop",
    "PreCompact": "pre-compact",
    "SessionEnd": "session-end",
}
NOT_FOUND = "the plugin found no hybrid-memory command"


def _bare_path() -> str:
    """A PATH with what Claude Code needs (node, git, a shell) and no hybrid-memory, no venv, no uv."""
    dirs: list[str] = []
    for tool in ("node", "git", "sh", "sed"):
        found = shutil.which(tool)
        assert found, f"{tool} is not on PATH"
        if str(Path(found).parent) not in dirs:
            dirs.append(str(Path(found).parent))
    for d in dirs:
        for absent in ("hybrid-memory", "uv", "uvx"):
            if (Path(d) / absent).exists():
                pytest.skip(f"{d} holds {absent} beside node/git, so no PATH without it can be built here")
    return os.pathsep.join(dirs)


def _session_env(data_dir: Path) -> dict[str, str]:
    """Claude Code's environment: a terminal where the README's venv was never activated."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HYBRID_MEMORY_", "QDRANT_", "NEO4J_"))}
    env.pop("VIRTUAL_ENV", None)
    env.update(PATH=_bare_path(), HYBRID_MEMORY_DATA_DIR=str(data_dir), HYBRID_MEMORY_HOOK_TIMEOUT_S="60")
    return env


def _clone(tmp_path: Path) -> Path:
    clone = tmp_path / "mcp-hybrid-memory"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True, timeout=120)
    return clone


def _set_up_as_the_readme_says(clone: Path) -> None:
    """``python3 -m venv .venv && . .venv/bin/activate && pip install -e .``, the dependencies borrowed.

    The package itself is installed editable into the clone's own venv, as the README does; its
    dependencies (onnxruntime, Qdrant Edge, ... some hundreds of MB) are this test run's own,
    seen through a ``.pth`` file instead of downloaded and built again (``--no-deps``).
    """
    subprocess.run([sys.executable, "-m", "venv", str(clone / ".venv")], check=True, timeout=120)
    python = clone / ".venv" / "bin" / "python"

    def run(*args: str) -> str:
        done = subprocess.run([str(python), *args], cwd=clone, check=True, capture_output=True, timeout=300)
        return done.stdout.decode().strip()

    site = run("-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])")
    (Path(site) / "_borrowed_dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    run("-m", "pip", "install", "-q", "--no-deps", "-e", ".")
    imported = run("-c", "import hybrid_memory; print(hybrid_memory.__file__)")
    assert imported.startswith(str(clone)), f"the clone's venv imports hybrid_memory from {imported}"


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def _hook_runs(debug_log: str) -> dict[str, list[str]]:
    """Claude Code's debug lines about our hooks, by event: each names the command and its exit status."""
    runs: dict[str, list[str]] = {}
    for line in debug_log.splitlines():
        for event, arg in EVENTS.items():
            if f'bin/hybrid-memory" hook {arg}]' in line and "status" in line:
                runs.setdefault(event, []).append(line)
    return runs


def test_the_plugin_works_from_a_fresh_clone_set_up_as_the_readme_says_with_the_venv_not_on_path(
    tmp_path: Path, data_dir: Path
) -> None:
    require_claude()
    clone = _clone(tmp_path)
    _set_up_as_the_readme_says(clone)
    project = git_project(tmp_path / "work" / "shop")
    env = _session_env(data_dir)
    with messages_standin(lambda _: "Noted.") as model:
        claude = ClaudeCode(home=tmp_path / "home", base_url=model.url, env=env)
        claude.home.mkdir()
        claude.run("plugin", "marketplace", "add", str(clone))
        claude.run("plugin", "install", "hybrid-memory@mcp-hybrid-memory")
        assert "hybrid-memory@mcp-hybrid-memory" in claude.run("plugin", "list").stdout

        # Session 1: a prompt, then (continued) a compaction, so that every hook of the plugin runs.
        debug = [tmp_path / "session-1.log", tmp_path / "session-1-compact.log"]
        claude.run("-p", FACT, "--debug-file", str(debug[0]), cwd=project)
        claude.run("--continue", "-p", "/compact", "--debug-file", str(debug[1]), cwd=project)

        listed = claude.run("mcp", "list", cwd=project).stdout
        server = next(line for line in listed.splitlines() if "hybrid-memory" in line)
        assert "bin/hybrid-memory serve" in server, listed
        assert "Connected" in server, listed

        first_of_session_2 = len(model.requests)
        claude.run("-p", QUESTION, cwd=project)
        session_2 = model.requests[first_of_session_2:]

    log = "\n".join(path.read_text() for path in debug)
    runs = _hook_runs(log)
    assert set(runs) == set(EVENTS), f"hooks that did not run: {set(EVENTS) - set(runs)}"
    for lines in runs.values():
        assert all("status 0" in line for line in lines), lines
    assert NOT_FOUND not in log
    assert "hybrid-memory hook" not in log.replace('bin/hybrid-memory" hook', ""), "a hook wrote an error"
    injected = (data_dir / "hooks" / "injections.jsonl").read_text().splitlines()
    injections = [json.loads(line) for line in injected]
    assert {"SessionStart", "UserPromptSubmit"} <= {i["event"] for i in injections}
    assert session_2, "the second session sent no request to the model"
    assert FACT in request_text(session_2[0])
    assert "[memory:" in request_text(session_2[0])


def _launcher(
    plugin: Path, *args: str, home: Path, stdin: str = "{}", **env: str
) -> subprocess.CompletedProcess[str]:
    """The plugin's ``bin/hybrid-memory`` run as Claude Code runs it, with a PATH that holds no package."""
    environment = {"PATH": _bare_path(), "HOME": str(home), "CLAUDE_PLUGIN_ROOT": str(plugin), **env}
    return subprocess.run(
        ["sh", str(plugin / "bin" / "hybrid-memory"), *args],
        input=stdin,
        env=environment,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_with_no_package_to_find_session_start_says_so_in_one_system_message_and_the_others_stay_quiet(
    tmp_path: Path,
) -> None:
    clone = _clone(tmp_path)
    plugin = clone / "plugins" / "hybrid-memory"

    started = _launcher(plugin, "hook", "session-start", home=tmp_path)
    assert started.returncode == 0
    lines = started.stdout.splitlines()
    assert len(lines) == 1, started.stdout
    message = json.loads(lines[0])
    assert list(message) == ["systemMessage"]
    assert message["systemMessage"] == (
        "hybrid-memory: the plugin found no hybrid-memory command (not in a checkout's .venv, not on PATH, "
        f"no uv), so memory is off; to fix it, in {clone} run: python3 -m venv .venv && "
        ".venv/bin/pip install -e . (or set HYBRID_MEMORY_COMMAND to the command's path), "
        "then start a new session."
    )
    for event in ("user-prompt-submit", "stop", "pre-compact", "session-end"):
        quiet = _launcher(plugin, "hook", event, home=tmp_path)
        assert (quiet.returncode, quiet.stdout) == (0, "")
        assert quiet.stderr.splitlines() == [message["systemMessage"]]
    served = _launcher(plugin, "serve", "--detached-host", home=tmp_path, stdin="")
    assert served.returncode == 127
    assert served.stderr.splitlines() == [message["systemMessage"]]


def test_with_no_package_to_find_claude_mcp_list_names_the_plugins_command(tmp_path: Path) -> None:
    require_claude()
    clone = _clone(tmp_path)
    with messages_standin(lambda _: "Noted.") as model:
        claude = ClaudeCode(home=tmp_path / "home", base_url=model.url, env=_session_env(tmp_path / "data"))
        claude.home.mkdir()
        claude.run("plugin", "marketplace", "add", str(clone))
        claude.run("plugin", "install", "hybrid-memory@mcp-hybrid-memory")
        listed = claude.run("mcp", "list", cwd=tmp_path).stdout
    server = next(line for line in listed.splitlines() if "hybrid-memory" in line)
    assert f"{clone}/plugins/hybrid-memory/bin/hybrid-memory serve --detached-host" in server, listed
    assert "Connected" not in server


def test_the_launcher_runs_the_command_that_hybrid_memory_command_names(tmp_path: Path) -> None:
    clone = _clone(tmp_path)
    named = tmp_path / "named"
    named.write_text('#!/bin/sh\nprintf "ran with %s\\n" "$*"\n')
    named.chmod(0o755)
    done = _launcher(
        clone / "plugins" / "hybrid-memory", "hook", "stop", home=tmp_path, HYBRID_MEMORY_COMMAND=str(named)
    )
    assert (done.returncode, done.stdout) == (0, "ran with hook stop\n")


def test_a_copy_of_the_plugin_finds_the_venv_of_the_checkout_claude_code_recorded_as_its_marketplace(
    tmp_path: Path,
) -> None:
    clone = _clone(tmp_path)
    venv_command = clone / ".venv" / "bin" / "hybrid-memory"
    venv_command.parent.mkdir(parents=True)
    venv_command.write_text('#!/bin/sh\nprintf "the venv ran %s\\n" "$*"\n')
    venv_command.chmod(0o755)
    copy = (
        tmp_path / "home" / ".claude" / "plugins" / "cache" / "mcp-hybrid-memory" / "hybrid-memory" / "0.1.0"
    )
    shutil.copytree(clone / "plugins" / "hybrid-memory", copy)
    known = {
        "mcp-hybrid-memory": {
            "source": {"source": "directory", "path": str(clone)},
            "installLocation": str(clone),
        }
    }
    (tmp_path / "home" / ".claude" / "plugins" / "known_marketplaces.json").write_text(
        json.dumps(known, indent=2)
    )
    done = _launcher(copy, "hook", "stop", home=tmp_path / "home")
    assert (done.returncode, done.stdout) == (0, "the venv ran hook stop\n")


def test_claude_code_validates_the_plugin(tmp_path: Path) -> None:
    require_claude()
    with messages_standin(lambda _: "Noted.") as model:
        claude = ClaudeCode(home=tmp_path / "home", base_url=model.url, env=_session_env(tmp_path / "data"))
        claude.home.mkdir()
        done = claude.run("plugin", "validate", str(REPO / "plugins" / "hybrid-memory"))
    assert "Validation passed" in done.stdout
    assert "bin/hybrid-memory" in done.stdout


def test_a_hybrid_memory_command_that_is_no_command_is_named_in_the_session_start_message(
    tmp_path: Path,
) -> None:
    clone = _clone(tmp_path)
    done = _launcher(
        clone / "plugins" / "hybrid-memory",
        "hook",
        "session-start",
        home=tmp_path,
        HYBRID_MEMORY_COMMAND=f"{tmp_path}/nowhere/hybrid-memory serve",
    )
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "systemMessage": "hybrid-memory: HYBRID_MEMORY_COMMAND starts with "
        f"{tmp_path}/nowhere/hybrid-memory, which is not a command here, so memory is off; "
        "to fix it, set HYBRID_MEMORY_COMMAND to the "
        "hybrid-memory command's path (or unset it), then start a new session."
    }
