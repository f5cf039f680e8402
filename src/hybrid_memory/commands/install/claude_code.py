"""Claude Code: the plugin (MCP server and hooks), installed by Claude Code's own commands.

Claude Code keeps its plugins in its own files (``~/.claude/plugins/``); its ``claude plugin``
commands are the supported way to change them, and the plugin finds the
``hybrid-memory`` command whatever PATH Claude Code runs with. So install runs
``claude plugin marketplace add <checkout>`` and ``claude plugin install
hybrid-memory@mcp-hybrid-memory`` (each only when not done yet), uninstall the reverse;
without ``claude`` on PATH, or with ``--dry-run``, it prints them.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

MARKETPLACE = "mcp-hybrid-memory"
PLUGIN = f"hybrid-memory@{MARKETPLACE}"


def checkout() -> Path:
    """The checkout this package runs from, which is the plugin's marketplace."""
    root = Path(__file__).resolve().parents[4]
    if (root / ".claude-plugin" / "marketplace.json").is_file() and (
        root / "plugins" / "hybrid-memory"
    ).is_dir():
        return root
    raise FileNotFoundError(
        "the Claude Code plugin installs from a checkout of mcp-hybrid-memory, and this package was not "
        "installed from one; clone it, pip install -e it, and run this again from its venv"
    )


def _config_dir(home: Path) -> Path:
    configured = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(configured) if configured else home / ".claude"


def _load(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def steps(home: Path, *, install: bool) -> list[list[str]]:
    """The ``claude`` commands still to run."""
    plugins = _config_dir(home) / "plugins"
    known = MARKETPLACE in _load(plugins / "known_marketplaces.json")
    installed = PLUGIN in _load(plugins / "installed_plugins.json").get("plugins", {})
    if install:
        source = str(checkout())
        return [
            *([] if known else [["plugin", "marketplace", "add", source]]),
            *([] if installed else [["plugin", "install", PLUGIN]]),
        ]
    return [
        *([["plugin", "uninstall", PLUGIN]] if installed else []),
        *([["plugin", "marketplace", "remove", MARKETPLACE]] if known else []),
    ]


def run(home: Path, *, install: bool, dry_run: bool) -> int:
    todo = steps(home, install=install)
    if not todo:
        print(f"claude-code {'already has' if install else 'has no'} hybrid-memory: nothing to change")
        return 0
    claude = shutil.which("claude")
    if dry_run or claude is None:
        if claude is None and not dry_run:
            print("hybrid-memory: claude is not on PATH; run these to finish:", file=sys.stderr)
        for step in todo:
            print(shlex.join(["claude", *step]))
        return 0 if dry_run else 1
    for step in todo:
        print(shlex.join(["claude", *step]))
        done = subprocess.run([claude, *step], check=False)
        if done.returncode != 0:
            print(f"hybrid-memory: claude {' '.join(step)} exited {done.returncode}", file=sys.stderr)
            return 1
    return 0
