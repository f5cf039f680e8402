"""The real agent CLIs from npm (``tools/<name>``), run under a throwaway HOME, offline.

Each runs against the loopback stand-in of its model API (:mod:`tests.e2e.messages_standin`):
Codex CLI a custom provider speaking the Responses API, Gemini CLI the Gemini API at
``GOOGLE_GEMINI_BASE_URL``, opencode a custom OpenAI-compatible provider.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, model_dir

TOOLS = REPO / "tools"
CLIS = {
    "codex": TOOLS / "codex-cli" / "node_modules" / ".bin" / "codex",
    "gemini": TOOLS / "gemini-cli" / "node_modules" / ".bin" / "gemini",
    "opencode": TOOLS / "opencode" / "node_modules" / ".bin" / "opencode",
    "claude-code": TOOLS / "claude-code" / "node_modules" / ".bin" / "claude",
}
HYBRID_MEMORY = Path(sys.executable).parent / "hybrid-memory"
TIMEOUT_S = 180


def require(agent: str) -> Path:
    """The pinned CLI, or a skip (a failure under CI) saying how to install it."""
    path = CLIS[agent]
    if path.is_file():
        return path
    reason = f"{agent} is not installed: npm ci --prefix {path.parents[2].relative_to(REPO)}"
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(reason, pytrace=False)
    pytest.skip(reason)


def agent_env(home: Path, data_dir: Path, base_url: str = "http://127.0.0.1:9") -> dict[str, str]:
    """An agent's environment: a throwaway HOME, our data dir, and PATH without our venv (the
    configuration names the command by its absolute path)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HYBRID_MEMORY_", "QDRANT_", "NEO4J_"))}
    env.pop("VIRTUAL_ENV", None)
    venv_bin = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join(
        [
            str(CLIS["claude-code"].parent),
            *(d for d in env.get("PATH", "").split(os.pathsep) if d != venv_bin),
        ]
    )
    for variable in ("XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "CODEX_HOME"):
        env.pop(variable, None)
    env.update(
        HOME=str(home),
        HYBRID_MEMORY_DATA_DIR=str(data_dir),
        HYBRID_MEMORY_EMBEDDING_MODEL_PATH=str(model_dir()),
        HYBRID_MEMORY_HOOK_TIMEOUT_S="60",
        # Gemini CLI
        GEMINI_API_KEY="test-key",
        GOOGLE_GEMINI_BASE_URL=base_url,
        GEMINI_CLI_NO_RELAUNCH="true",
        # Codex CLI's stand-in provider
        STANDIN_API_KEY="test-key",
        # opencode and Claude Code: nothing beyond loopback
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        DISABLE_AUTOUPDATER="1",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="test-key",
    )
    return env


def run(
    args: list[str], env: dict[str, str], cwd: Path, *, check: bool = True
) -> subprocess.CompletedProcess[str]:
    env = {**env, "PWD": str(cwd)}  # opencode takes its directory from PWD, as a shell sets it
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(args[:3])} exited {done.returncode}: {done.stderr[-3000:]}")
    return done


def hybrid_memory(env: dict[str, str], cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run([str(HYBRID_MEMORY), *args], env, cwd)


def files(home: Path) -> dict[str, bytes]:
    """Every file under ``home``, by its relative path: what a command changed shows as a difference."""
    return {
        str(p.relative_to(home)): p.read_bytes()
        for p in sorted(home.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def codex_provider(home: Path, base_url: str) -> str:
    """The user's own Codex settings before install: the stand-in provider, with a comment."""
    text = (
        "# my Codex settings\n"
        'model = "gpt-standin"\nmodel_provider = "standin"\n\n'
        "[model_providers.standin]\n"
        f'name = "standin"\nbase_url = "{base_url}/v1"\nwire_api = "responses"\n'
        'env_key = "STANDIN_API_KEY"\n'
    )
    (home / ".codex").mkdir(parents=True, exist_ok=True)
    (home / ".codex" / "config.toml").write_text(text)
    return text


def gemini_settings(home: Path, project: Path) -> str:
    """The user's own Gemini settings (API-key auth, a comment) and the project folder trusted."""
    text = '{\n  // my Gemini settings\n  "security": {"auth": {"selectedType": "gemini-api-key"}}\n}\n'
    (home / ".gemini").mkdir(parents=True, exist_ok=True)
    (home / ".gemini" / "settings.json").write_text(text)
    (home / ".gemini" / "trustedFolders.json").write_text(json.dumps({str(project): "TRUST_FOLDER"}))
    return text


def opencode_settings(home: Path, base_url: str) -> str:
    """The user's own opencode settings: a custom OpenAI-compatible provider (the stand-in), a comment."""
    config = {
        "$schema": "https://opencode.ai/config.json",
        "model": "standin/standin-model",
        "provider": {
            "standin": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Stand-in",
                "options": {"baseURL": f"{base_url}/v1", "apiKey": "test-key"},
                "models": {"standin-model": {"name": "Stand-in model"}},
            }
        },
    }
    text = "// my opencode settings\n" + json.dumps(config, indent=2) + "\n"
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "opencode.jsonc").write_text(text)
    return text
