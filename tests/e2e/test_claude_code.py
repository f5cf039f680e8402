"""The plugin in the real Claude Code: installed from this checkout, sessions run against a stand-in model.

Skipped when ``tools/claude-code`` is not installed (``npm ci --prefix tools/claude-code``).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hybrid_memory.integrations.config import HookConfig
from hybrid_memory.integrations.pending import settled
from tests.e2e.claude_code import ClaudeCode, git_project, hook_env, require_claude, stop_hosts
from tests.e2e.messages_standin import ToolUse, messages_standin, request_text

pytestmark = [pytest.mark.claude_code, pytest.mark.subprocess, pytest.mark.model]

FACT = "The staging database is rebuilt every Thursday at 04:30 from the nightly snapshot."
QUESTION = "When is the staging database rebuilt, and from what?"
LOOK_IT_UP = "Look it up in memory: when is the staging database rebuilt?"
RECALL_TOOL = "mcp__plugin_hybrid-memory_hybrid-memory__recall_memory"
MCP_TOOLS_UP_FRONT = {"ENABLE_TOOL_SEARCH": "false"}
"""Claude Code then lists MCP tools in the request instead of behind its tool search."""
SCAFFOLDING = (
    "<system-reminder>",
    "Primary working directory",
    "additional context",
    "<command-",
    "Today's date",
)


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    """The sessions' data dir; the hosts their hooks start are stopped however the test ends."""
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def _model(body: dict[str, Any]) -> str | ToolUse:
    """Calls the memory server's recall tool when asked to look something up, else says "Noted."."""
    last = _last_user(body)
    if _tool_results(last):
        return "Done."
    if LOOK_IT_UP in request_text({"messages": [last]}):
        return ToolUse(RECALL_TOOL, {"query": QUESTION})
    return "Noted."


def _last_user(body: dict[str, Any]) -> dict[str, Any]:
    """The last user message (Claude Code may put system messages after it)."""
    return next(m for m in reversed(body["messages"]) if m.get("role") == "user")


def _tool_results(message: dict[str, Any]) -> str:
    content = message.get("content")
    blocks = content if isinstance(content, list) else []
    return json.dumps(
        [b.get("content") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    )[2:-2]


def _export(data_dir: Path, tmp_path: Path) -> list[dict[str, object]]:
    out = tmp_path / "export.jsonl"
    subprocess.run(
        [sys.executable, "-m", "hybrid_memory", "export", str(out), "--all-projects", "--quiet"],
        env=hook_env(data_dir),
        check=True,
        capture_output=True,
        timeout=120,
    )
    return [json.loads(line) for line in out.read_text().splitlines()]


def test_a_fact_stated_in_one_session_reaches_the_first_request_of_the_next_in_the_same_project_only(
    tmp_path: Path, data_dir: Path
) -> None:
    require_claude()
    alpha = git_project(tmp_path / "work" / "alpha")
    beta = git_project(tmp_path / "work" / "beta")
    with messages_standin(_model) as model:
        claude = ClaudeCode(home=tmp_path / "home", base_url=model.url, env=hook_env(data_dir))
        claude.home.mkdir()
        claude.install_plugin()
        plugins = claude.run("plugin", "list").stdout
        assert "hybrid-memory@mcp-hybrid-memory" in plugins

        claude.run("-p", FACT, cwd=alpha)
        first_of_session_2 = len(model.requests)
        claude.run("-p", QUESTION, cwd=alpha)
        first_of_session_3 = len(model.requests)
        claude.run("-p", QUESTION, cwd=beta)

        session_2 = model.requests[first_of_session_2:first_of_session_3]
        session_3 = model.requests[first_of_session_3:]
        assert session_2, "the second session sent no request to the model"
        assert FACT in request_text(session_2[0])
        assert "[memory:" in request_text(session_2[0])
        assert session_3
        assert not any(FACT in request_text(r) for r in session_3)

        # The MCP server resolves the project from Claude Code's root as the hooks did from the cwd.
        mcp_results = {}
        for project in (alpha, beta):
            first = len(model.requests)
            claude.run("-p", LOOK_IT_UP, "--allowedTools", RECALL_TOOL, cwd=project, env=MCP_TOOLS_UP_FRONT)
            answered = [_tool_results(_last_user(r)) for r in model.requests[first:]]
            mcp_results[project.name] = next(a for a in answered if a)
        assert FACT in mcp_results["alpha"]
        assert FACT not in mcp_results["beta"]

    config = HookConfig.from_env()._replace(data_dir=data_dir)
    assert settled(config, 60), "a capture was still running after 60 s"
    stop_hosts(data_dir)
    records = _export(data_dir, tmp_path)
    memories = [r for r in records if r.get("item") == "memory"]
    stated = [m for m in memories if m["text"] == FACT and m["kind"] == "message"]
    assert len(stated) == 1, stated
    # The statement finder keeps the fact as a note too, once.
    assert len([m for m in memories if m["text"] == FACT and m["kind"] == "note"]) == 1
    # A project is the repository, named by its path: the hooks and the MCP server agree on it.
    assert stated[0]["project"] == str(alpha.resolve())
    assert {m["project"] for m in memories} == {str(alpha.resolve()), str(beta.resolve())}
    for memory in memories:
        assert not any(marker in str(memory["text"]) for marker in SCAFFOLDING), memory["text"]
    # Each session is one thread: its prompt (the model's "Noted." carries nothing and is not kept);
    # beside it only what capture derives from a session (its digest, notes' searchable copies).
    by_thread: dict[str, list[str]] = {}
    for memory in memories:
        if memory["kind"] == "message":
            by_thread.setdefault(str(memory["thread_id"]), []).append(str(memory["role"]))
    assert sorted(sorted(roles) for roles in by_thread.values()) == [["user"]] * 5
    assert not any(m["text"] == "Noted." for m in memories)
    assert {m["kind"] for m in memories} - {"message"} <= {"summary", "note"}
