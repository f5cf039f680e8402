"""Sessions of the real Gemini CLI, Codex CLI and opencode after ``hybrid-memory install``: one memory.

Each agent runs offline against the loopback stand-in of its model API, under one throwaway
HOME where install wrote their configuration, in one repository. A fact told in Gemini CLI
(captured by its AfterAgent hook from its session file) is in the first request of Codex's
next session, and in Claude Code's and opencode's when asked (the plugins' injection); a fact told in
opencode (captured from the messages its plugin hands over when the session goes idle) is
in Gemini CLI's next request. Codex runs only hooks a user has trusted: the test passes
``--dangerously-bypass-hook-trust`` for the hooks install wrote.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hybrid_memory.integrations.config import HookConfig
from hybrid_memory.integrations.pending import settled
from tests.e2e.agent_clis import (
    agent_env,
    codex_provider,
    gemini_settings,
    hybrid_memory,
    opencode_settings,
    require,
    run,
)
from tests.e2e.claude_code import git_project, message_counts, stop_hosts
from tests.e2e.messages_standin import StandIn, messages_standin, request_text

pytestmark = [pytest.mark.agent_cli, pytest.mark.subprocess, pytest.mark.model]

GEMINI_FACT = "The staging database is restored from the nightly snapshot every Sunday at 03:00."
OPENCODE_FACT = "Invoices above ten thousand euros need a second approver from the finance team."


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def _session(model: StandIn, args: list[str], env: dict[str, str], cwd: Path) -> list[dict[str, Any]]:
    """Run one session; the model requests it made."""
    first = len(model.requests)
    run(args, env, cwd)
    assert settled(HookConfig.from_env()._replace(data_dir=Path(env["HYBRID_MEMORY_DATA_DIR"])), 120)
    return model.requests[first:]


def _gemini_sessions(home: Path) -> list[str]:
    found = sorted((home / ".gemini" / "tmp").rglob("session-*.jsonl"))
    return [json.loads(path.read_text().splitlines()[0])["sessionId"] for path in found]


def test_a_fact_told_in_one_agent_reaches_the_next_session_of_another(tmp_path: Path, data_dir: Path) -> None:
    gemini, codex, opencode = require("gemini"), require("codex"), require("opencode")
    claude = require("claude-code")
    home = tmp_path / "home"
    project = git_project(tmp_path / "work" / "shop")
    with messages_standin() as model:
        env = agent_env(home, data_dir, model.url)
        codex_provider(home, model.url)
        gemini_settings(home, project)
        opencode_settings(home, model.url)
        for agent in ("gemini", "codex", "opencode", "claude-code"):
            hybrid_memory(env, project, "install", agent)

        _session(model, [str(gemini), "-m", "gemini-2.5-flash", "-p", GEMINI_FACT], env, project)
        codex_sees = _session(
            model,
            [
                str(codex),
                "exec",
                "--dangerously-bypass-hook-trust",
                "--skip-git-repo-check",
                "How often is the staging database restored?",
            ],
            env,
            project,
        )
        claude_sees = _session(
            model, [str(claude), "-p", "How often is the staging database restored?"], env, project
        )
        opencode_sees = _session(
            model, [str(opencode), "run", "When is the staging database restored?"], env, project
        )
        _session(model, [str(opencode), "run", OPENCODE_FACT], env, project)
        gemini_sees = _session(
            model,
            [str(gemini), "-m", "gemini-2.5-flash", "-p", "Who has to approve a large invoice?"],
            env,
            project,
        )

    threads = message_counts(data_dir, project)
    opencode_threads = [p.stem for p in (data_dir / "hooks" / "opencode").glob("*.jsonl")]
    assert [t for t in _gemini_sessions(home) if threads.get(t)], threads
    assert len(opencode_threads) == 2
    assert all(threads.get(t) for t in opencode_threads), threads

    assert "input" in codex_sees[0]  # a Responses API request: Codex's own
    assert GEMINI_FACT in request_text(codex_sees[0])
    assert "recall_memory" in json.dumps(codex_sees[0].get("tools")), "Codex did not list the memory's tools"
    assert any(GEMINI_FACT in request_text(r) for r in claude_sees if r.get("tools"))
    main_loop = [r for r in opencode_sees if r.get("tools")]
    assert any(GEMINI_FACT in request_text(r) for r in main_loop)
    assert any("recall_memory" in json.dumps(r["tools"]) for r in main_loop)
    assert any(OPENCODE_FACT in request_text(r) for r in gemini_sees)
