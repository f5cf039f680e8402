"""What ``install`` writes into each agent's own configuration, and what ``uninstall`` takes out.

Each agent gets the MCP server (``hybrid-memory serve --detached-host``, the command by its
absolute path, so the agent's PATH does not matter) and what makes its sessions captured
and injected: hooks where the agent runs hooks (Codex CLI, Gemini CLI), a plugin where it
runs plugins (opencode). An entry is ours when its command is a ``hybrid-memory`` program
running ``serve`` or ``hook``: install replaces ours (a moved venv), uninstall removes only
ours. Each function maps a file's text before to its text after, so a second install
returns the text it was given.
"""

from __future__ import annotations

import json
import os
import shlex
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import tomlkit
from tomlkit.items import Table

from hybrid_memory.commands.install import jsonc

SERVER = "hybrid-memory"
SERVE_ARGS = ["serve", "--detached-host"]
CODEX_HOOKS = {"SessionStart": "session-start", "UserPromptSubmit": "user-prompt-submit", "Stop": "stop"}
GEMINI_HOOKS = {
    "SessionStart": "session-start",
    "BeforeAgent": "user-prompt-submit",
    "AfterAgent": "stop",
    "PreCompress": "pre-compact",
    "SessionEnd": "session-end",
}
"""Gemini CLI's events and the hook each runs: its payloads have Claude Code's fields."""
OURS_MARK = "written by hybrid-memory install"
HOOK_TIMEOUT_S = 30
CODEX_ENV_VARS = ["HYBRID_MEMORY_DATA_DIR", "HYBRID_MEMORY_PROJECT"]
"""Passed on to Codex's MCP server, which gets only a few variables otherwise: it opens the hooks' store."""


@dataclass(frozen=True)
class Change:
    """One file: its text before and after (``None``: absent)."""

    path: Path
    before: str | None
    after: str | None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _change(path: Path, edit: Any) -> Change:
    """The change ``edit`` makes to ``path``'s text; a file an edit leaves holding nothing is removed."""
    before = _read(path)
    try:
        after = edit(before or "")
    except ValueError as exc:  # JSON(C) or TOML the agent itself could not read either
        raise ValueError(f"{path} could not be read ({exc}); fix it, then run this again") from None
    if after == (before or ""):
        return Change(path, before, before)
    return Change(path, before, after if _holds_anything(path, after) else None)


def _holds_anything(path: Path, text: str) -> bool:
    if not text.strip():
        return False
    if path.suffix in (".json", ".jsonc"):
        try:
            return bool(jsonc.loads(text, jsonc.parse(text)))
        except jsonc.JsoncError:
            return True
    return True


def is_ours(command: Any) -> bool:
    """A command line (or argv) that runs a ``hybrid-memory`` program's ``serve`` or ``hook``."""
    try:
        words = command if isinstance(command, list) else shlex.split(str(command))
    except ValueError:
        return False
    return (
        len(words) >= 2
        and isinstance(words[0], str)
        and Path(words[0]).name == "hybrid-memory"
        and words[1] in ("serve", "hook")
    )


def hook_command(command: str, event: str) -> str:
    return f"{shlex.quote(command)} hook {event}"


def _group_is_ours(group: Any) -> bool:
    hooks = group.get("hooks") if isinstance(group, dict) else None
    return isinstance(hooks, list) and any(isinstance(h, dict) and is_ours(h.get("command")) for h in hooks)


def _group(command: str, event: str, timeout: int) -> dict[str, Any]:
    return {"hooks": [{"type": "command", "command": hook_command(command, event), "timeout": timeout}]}


def _hooks_json(text: str, command: str | None, events: dict[str, str], timeout: int) -> str:
    """``text`` (a JSON hooks file) with our hook group for each event, or (``command`` None) without;
    unchanged when it holds exactly our groups already."""
    if command is not None and text.strip():
        data = jsonc.loads(text, jsonc.parse(text))
        hooks = data.get("hooks") if isinstance(data, dict) else None
        if isinstance(hooks, dict) and all(
            [g for g in hooks.get(event, []) if _group_is_ours(g)] == [_group(command, name, timeout)]
            for event, name in events.items()
        ):
            return text
    for event in events:
        text = jsonc.remove_elements(text, ["hooks", event], lambda group: not _group_is_ours(group))
    if command is None:
        return text
    for event, name in events.items():
        text = jsonc.append_element(text, ["hooks", event], _group(command, name, timeout))
    return text


def _json_server(text: str, path: list[str], entry: dict[str, Any] | None) -> str:
    if entry is None:
        return jsonc.remove_member(text, path, SERVER)
    return jsonc.set_member(text, path, SERVER, entry)


# Codex CLI -----------------------------------------------------------------------------------------


def codex_home(home: Path) -> Path:
    configured = os.environ.get("CODEX_HOME")
    return Path(configured).expanduser() if configured else home / ".codex"


def _codex_toml(text: str, command: str | None) -> str:
    doc = tomlkit.parse(text)
    servers = doc.get("mcp_servers")
    if command is None:
        if isinstance(servers, Table) and SERVER in servers:
            del servers[SERVER]
            if not servers:
                del doc["mcp_servers"]
        after = tomlkit.dumps(doc)
        # A table taken out leaves the blank line tomlkit put before it when it was added.
        return after.rstrip("\n") + "\n" if after != text and after.endswith("\n\n") else after
    entry = {"command": command, "args": SERVE_ARGS, "env_vars": CODEX_ENV_VARS}
    if not isinstance(servers, Table):
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    current = servers.get(SERVER)
    if current is None or current.unwrap() != entry:
        table = tomlkit.table()
        table.update(entry)
        servers[SERVER] = table
    return tomlkit.dumps(doc)


def codex(home: Path, command: str | None) -> list[Change]:
    base = codex_home(home)
    return [
        _change(base / "config.toml", lambda t: _codex_toml(t, command)),
        _change(base / "hooks.json", lambda t: _hooks_json(t, command, CODEX_HOOKS, HOOK_TIMEOUT_S)),
    ]


# Gemini CLI ----------------------------------------------------------------------------------------


def gemini(home: Path, command: str | None) -> list[Change]:
    path = home / ".gemini" / "settings.json"
    entry = {"command": command, "args": SERVE_ARGS} if command else None

    def edit(text: str) -> str:
        text = _json_server(text, ["mcpServers"], entry)
        return _hooks_json(text, command, GEMINI_HOOKS, HOOK_TIMEOUT_S * 1000)

    return [_change(path, edit)]


# opencode ------------------------------------------------------------------------------------------

PLUGIN_NAME = "hybrid-memory.js"


def opencode_dir(home: Path) -> Path:
    configured = os.environ.get("XDG_CONFIG_HOME")
    return (Path(configured) if configured else home / ".config") / "opencode"


def plugin_text(command: str) -> str:
    template = resources.files("hybrid_memory.integrations").joinpath("opencode_plugin.js").read_text()
    return template.replace("__HYBRID_MEMORY_COMMAND__", json.dumps(command))


def opencode(home: Path, command: str | None) -> list[Change]:
    base = opencode_dir(home)
    config = next((p for p in (base / "opencode.jsonc", base / "opencode.json") if p.is_file()), None)
    config = config or base / "opencode.json"
    entry = {"type": "local", "command": [command, *SERVE_ARGS], "enabled": True} if command else None

    def edit(text: str) -> str:
        if entry is not None and not text.strip():
            text = '{\n  "$schema": "https://opencode.ai/config.json"\n}\n'
        after = _json_server(text, ["mcp"], entry)
        if entry is None and after != text and _only_schema(after):
            return ""
        return after

    plugin = base / "plugins" / PLUGIN_NAME
    current = _read(plugin)
    if current is not None and OURS_MARK not in current:
        raise FileExistsError(
            f"{plugin} is not the plugin hybrid-memory writes; move it away, then run again"
        )
    return [_change(config, edit), Change(plugin, current, plugin_text(command) if command else None)]


def _only_schema(text: str) -> bool:
    data = jsonc.loads(text, jsonc.parse(text))
    return isinstance(data, dict) and set(data) <= {"$schema"}
