"""One memory for two agents: the real Codex CLI and the real Claude Code on the same project.

Codex CLI runs the same ``hybrid-memory hook <event>`` commands from ``~/.codex/hooks.json``
(its hook payloads have Claude Code's shape; its transcript is its own session file),
against a loopback stand-in of OpenAI's Responses API. Codex runs only hooks a user has
trusted; the test passes ``--dangerously-bypass-hook-trust`` for the hooks it wrote itself.
Skipped when ``tools/codex-cli`` or ``tools/claude-code`` is not installed.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from hybrid_memory.integrations.config import HookConfig
from hybrid_memory.integrations.pending import settled
from tests.conftest import REPO
from tests.e2e.claude_code import ClaudeCode, git_project, hook_env, require_claude, stop_hosts
from tests.e2e.messages_standin import messages_standin, request_text

pytestmark = [pytest.mark.claude_code, pytest.mark.subprocess, pytest.mark.model]

CODEX = REPO / "tools" / "codex-cli" / "node_modules" / ".bin" / "codex"
CLAUDE_FACT = "The billing service retries failed webhooks four times, an hour apart."
CODEX_FACT = "The mobile app release branch is cut every second Wednesday at noon."
HOOKS = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt-submit", "Stop": "stop"}


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    """The sessions' data dir; the hosts their hooks start are stopped however the test ends."""
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def _require_codex() -> None:
    if CODEX.is_file():
        return
    reason = "Codex CLI is not installed in tools/codex-cli: npm ci --prefix tools/codex-cli"
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def _codex_home(home: Path, base_url: str) -> None:
    codex = home / ".codex"
    codex.mkdir(parents=True)
    (codex / "config.toml").write_text(
        'model = "gpt-standin"\nmodel_provider = "standin"\n\n'
        "[model_providers.standin]\n"
        f'name = "standin"\nbase_url = "{base_url}/v1"\nwire_api = "responses"\n'
        'env_key = "STANDIN_API_KEY"\n\n'
        "[features]\nhooks = true\n"
    )
    hooks = {
        event: [{"hooks": [{"type": "command", "command": f"hybrid-memory hook {name}", "timeout": 60}]}]
        for event, name in HOOKS.items()
    }
    (codex / "hooks.json").write_text(json.dumps({"hooks": hooks}))


def _codex(home: Path, env: dict[str, str], prompt: str, cwd: Path) -> None:
    done = subprocess.run(
        [str(CODEX), "exec", "--dangerously-bypass-hook-trust", "--skip-git-repo-check", prompt],
        cwd=cwd,
        env={**env, "HOME": str(home), "STANDIN_API_KEY": "test-key"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_claude_code_and_codex_share_one_memory_per_project(tmp_path: Path, data_dir: Path) -> None:
    require_claude()
    _require_codex()
    alpha = git_project(tmp_path / "work" / "alpha")
    beta = git_project(tmp_path / "work" / "beta")
    env = hook_env(data_dir)
    codex_home = tmp_path / "codex-home"
    with messages_standin() as model:
        _codex_home(codex_home, model.url)
        claude = ClaudeCode(home=tmp_path / "home", base_url=model.url, env=env)
        claude.home.mkdir()
        claude.install_plugin()

        claude.run("-p", CLAUDE_FACT, cwd=alpha)
        first = len(model.requests)
        _codex(codex_home, env, "How often does the billing service retry failed webhooks?", alpha)
        codex_sees = model.requests[first]

        _codex(codex_home, env, CODEX_FACT, alpha)
        first = len(model.requests)
        claude.run("-p", "When is the mobile app release branch cut?", cwd=alpha)
        claude_sees = model.requests[first]

        first = len(model.requests)
        _codex(codex_home, env, "How often does the billing service retry failed webhooks?", beta)
        elsewhere = model.requests[first:]

    assert "input" in codex_sees  # a Responses API request: Codex's own
    assert CLAUDE_FACT in request_text(codex_sees)
    assert CODEX_FACT in request_text(claude_sees)
    assert elsewhere
    assert not any(CLAUDE_FACT in request_text(r) for r in elsewhere)
    assert settled(HookConfig.from_env()._replace(data_dir=data_dir), 60)
    stop_hosts(data_dir)
