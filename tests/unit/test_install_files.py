"""What ``hybrid-memory install``/``uninstall`` write into each agent's files (the real CLIs read them in
tests/e2e/test_agent_install.py): the user's text kept, nothing written twice, only ours removed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybrid_memory.cli import main
from hybrid_memory.commands.install import agents, jsonc, plan

HM = "/opt/hm/.venv/bin/hybrid-memory"
USER_FILES = {
    "codex": {
        ".codex/config.toml": '# mine\nmodel = "o3"  # the best\n\n[tui]\nnotifications = true\n',
        ".codex/hooks.json": json.dumps(
            {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]}}, indent=2
        )
        + "\n",
    },
    "gemini": {
        ".gemini/settings.json": '{\n\t// mine\n\t"theme": "GitHub",\n\t"hooks": {\n\t\t"SessionStart": [\n'
        '\t\t\t{"hooks": [{"type": "command", "command": "echo hi"}]},\n\t\t],\n\t},\n}\n',
    },
    "opencode": {
        ".config/opencode/opencode.jsonc": '// mine\n{\n  "model": "anthropic/claude",\n  "mcp": {\n'
        '    "other": {"type": "remote", "url": "https://example.org/mcp"}\n  }\n}\n',
    },
}


@pytest.fixture(autouse=True)
def _no_agent_homes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("CODEX_HOME", "XDG_CONFIG_HOME", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(variable, raising=False)


def _home(tmp_path: Path, agent: str) -> Path:
    for name, text in USER_FILES[agent].items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return tmp_path


def _apply(home: Path, agent: str, command: str | None) -> None:
    for change in plan(agent, home, command):
        if change.after is None:
            change.path.unlink()
        else:
            change.path.parent.mkdir(parents=True, exist_ok=True)
            change.path.write_text(change.after)


@pytest.mark.parametrize("agent", ["codex", "gemini", "opencode"])
def test_uninstall_gives_back_the_users_files_byte_for_byte(tmp_path: Path, agent: str) -> None:
    home = _home(tmp_path, agent)
    _apply(home, agent, HM)
    installed = {p: p.read_text() for p in home.rglob("*") if p.is_file()}
    _apply(home, agent, None)

    assert {str(p.relative_to(home)): p.read_text() for p in home.rglob("*") if p.is_file()} == USER_FILES[
        agent
    ]
    assert any(HM in text for text in installed.values())


@pytest.mark.parametrize("agent", ["codex", "gemini", "opencode"])
def test_a_second_install_changes_nothing(tmp_path: Path, agent: str) -> None:
    home = _home(tmp_path, agent)
    _apply(home, agent, HM)

    assert plan(agent, home, HM) == []


@pytest.mark.parametrize("agent", ["codex", "gemini", "opencode"])
def test_install_keeps_the_users_comments_and_settings(tmp_path: Path, agent: str) -> None:
    home = _home(tmp_path, agent)
    _apply(home, agent, HM)

    for name, text in USER_FILES[agent].items():
        after = (home / name).read_text()
        for line in text.splitlines():
            if line.strip() not in ("}", "},", "]", "],", "\t\t],", "\t},"):
                assert line.rstrip(",") in after, (name, line)


def test_gemini_gets_the_server_and_a_hook_for_each_event_beside_the_users_own(tmp_path: Path) -> None:
    home = _home(tmp_path, "gemini")
    _apply(home, "gemini", HM)
    text = (home / ".gemini" / "settings.json").read_text()
    settings = jsonc.loads(text, jsonc.parse(text))

    assert settings["mcpServers"]["hybrid-memory"] == {"command": HM, "args": ["serve", "--detached-host"]}
    commands = {
        event: [h["command"] for group in groups for h in group["hooks"]]
        for event, groups in settings["hooks"].items()
    }
    assert commands == {
        "SessionStart": ["echo hi", f"{HM} hook session-start"],
        "BeforeAgent": [f"{HM} hook user-prompt-submit"],
        "AfterAgent": [f"{HM} hook stop"],
        "PreCompress": [f"{HM} hook pre-compact"],
        "SessionEnd": [f"{HM} hook session-end"],
    }


def test_install_from_a_moved_venv_replaces_the_old_command(tmp_path: Path) -> None:
    home = _home(tmp_path, "codex")
    _apply(home, "codex", HM)
    _apply(home, "codex", "/home/ada/new venv/bin/hybrid-memory")
    hooks = json.loads((home / ".codex" / "hooks.json").read_text())["hooks"]
    config = (home / ".codex" / "config.toml").read_text()

    assert [h["command"] for g in hooks["Stop"] for h in g["hooks"]] == [
        "notify-send done",
        "'/home/ada/new venv/bin/hybrid-memory' hook stop",
    ]
    assert HM not in config
    assert 'command = "/home/ada/new venv/bin/hybrid-memory"' in config


def test_a_plugin_file_of_someone_else_is_not_overwritten(tmp_path: Path) -> None:
    plugin = tmp_path / ".config" / "opencode" / "plugins" / "hybrid-memory.js"
    plugin.parent.mkdir(parents=True)
    plugin.write_text("export const Mine = async () => ({})\n")

    with pytest.raises(FileExistsError, match="is not the plugin hybrid-memory writes"):
        agents.opencode(tmp_path, HM)


def test_dry_run_prints_the_diff_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    home = _home(tmp_path, "gemini")
    monkeypatch.setenv("HOME", str(home))

    assert main(["install", "gemini", "--dry-run", "--command", HM]) == 0

    out = capsys.readouterr().out
    assert out.startswith(f"--- {home}/.gemini/settings.json\n+++ {home}/.gemini/settings.json\n")
    assert f'"command": "{HM} hook stop",\n' in out
    assert all(line.startswith(("---", "+++", "@@", "+", " ")) for line in out.splitlines())
    assert (home / ".gemini" / "settings.json").read_text() == USER_FILES["gemini"][".gemini/settings.json"]


def test_jsonc_edits_keep_trailing_commas_and_comments() -> None:
    text = '{\n  // keep me\n  "a": [1, 2,], /* and me */\n}\n'
    added = jsonc.set_member(text, ["mcp"], "x", {"on": True})

    member = '  "mcp": {\n    "x": {\n      "on": true\n    }\n  },\n'
    assert added == '{\n  // keep me\n  "a": [1, 2,], /* and me */\n' + member + "}\n"
    assert jsonc.remove_member(added, ["mcp"], "x") == text


def test_a_member_added_after_a_line_comment_leaves_the_comment_on_its_line() -> None:
    text = '{\n  "a": 1 // the answer\n}\n'
    added = jsonc.set_member(text, [], "b", 2)

    assert added == '{\n  "a": 1, // the answer\n  "b": 2\n}\n'
    assert jsonc.remove_member(added, [], "b") == text


def test_a_file_that_is_not_json_is_named_with_its_line() -> None:
    with pytest.raises(jsonc.JsoncError, match="no ',' or '}' at line 3"):
        jsonc.parse('{\n  "a": 1\n  "b": 2\n}\n')


def test_a_settings_file_that_is_not_json_is_named_and_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = tmp_path / ".gemini" / "settings.json"
    settings.parent.mkdir()
    settings.write_text('{\n  "theme": "GitHub"\n  "x": 1\n}\n')
    monkeypatch.setenv("HOME", str(tmp_path))

    assert main(["install", "gemini", "--command", HM]) == 1

    assert capsys.readouterr().err == (
        f"hybrid-memory install gemini: {settings} could not be read (no ',' or '}}' at line 3); "
        "fix it, then run this again\n"
    )
    assert settings.read_text() == '{\n  "theme": "GitHub"\n  "x": 1\n}\n'


def test_claude_code_runs_only_the_plugin_commands_not_done_yet(tmp_path: Path) -> None:
    from hybrid_memory.commands.install import claude_code

    plugins = tmp_path / ".claude" / "plugins"
    plugins.mkdir(parents=True)
    fresh = claude_code.steps(tmp_path, install=True)
    (plugins / "known_marketplaces.json").write_text(json.dumps({"mcp-hybrid-memory": {}}))
    half = claude_code.steps(tmp_path, install=True)
    (plugins / "installed_plugins.json").write_text(
        json.dumps({"version": 2, "plugins": {"hybrid-memory@mcp-hybrid-memory": [{}]}})
    )

    assert fresh == [
        ["plugin", "marketplace", "add", str(claude_code.checkout())],
        ["plugin", "install", "hybrid-memory@mcp-hybrid-memory"],
    ]
    assert half == [["plugin", "install", "hybrid-memory@mcp-hybrid-memory"]]
    assert claude_code.steps(tmp_path, install=True) == []
    assert claude_code.steps(tmp_path, install=False) == [
        ["plugin", "uninstall", "hybrid-memory@mcp-hybrid-memory"],
        ["plugin", "marketplace", "remove", "mcp-hybrid-memory"],
    ]
