"""The hooks' settings from ``HYBRID_MEMORY_*``, read with the standard library (no pydantic)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from hybrid_memory.projects import project_name, root_uri

CAPTURE_LOCK = "capture.lock"
"""Held shared by every capture in progress, so a starting session can wait for them (capture.settled)."""


def _default_data_dir() -> Path:
    import platformdirs  # light, and the same rule as the server's settings

    return Path(platformdirs.user_data_dir("mcp-hybrid-memory", appauthor=False))


def _number(name: str, default: float, low: float, high: float) -> float:
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(
            f"{name}={raw!r} is not a number; set it to one between {low:g} and {high:g}"
        ) from None
    if not low <= value <= high:
        raise ValueError(f"{name}={raw!r} is out of range; set it between {low:g} and {high:g}")
    return value


class HookConfig(NamedTuple):
    """A NamedTuple, not a dataclass: ``dataclasses`` imports ``inspect``, a tenth of a hook's imports."""

    data_dir: Path
    project: str | None
    """HYBRID_MEMORY_PROJECT: when set, every session uses it (as the server does)."""
    context_tokens: int
    """HYBRID_MEMORY_HOOK_CONTEXT_TOKENS: the budget of what SessionStart injects (default 800)."""
    prompt_tokens: int
    """HYBRID_MEMORY_HOOK_PROMPT_TOKENS: the budget of what one prompt gets injected (default 300)."""
    min_match: float
    """HYBRID_MEMORY_HOOK_MIN_MATCH: the least ``match`` a memory needs to be injected for a prompt."""
    timeout_s: float
    """HYBRID_MEMORY_HOOK_TIMEOUT_S: how long a hook waits for the host (started when none runs)."""
    detach: bool
    """HYBRID_MEMORY_HOOK_DETACH=0 makes capture finish before the hook returns (default: detached)."""
    min_note_match: float = 0.1
    """HYBRID_MEMORY_HOOK_MIN_NOTE_MATCH: the least ``match`` a note (a decision, rule, fact) needs
    to be injected for a prompt: lower than a turn's, a note being short, distilled and current."""

    @classmethod
    def from_env(cls) -> HookConfig:
        data_dir = os.environ.get("HYBRID_MEMORY_DATA_DIR", "").strip()
        return cls(
            data_dir=Path(data_dir).expanduser() if data_dir else _default_data_dir(),
            project=os.environ.get("HYBRID_MEMORY_PROJECT", "").strip() or None,
            context_tokens=int(_number("HYBRID_MEMORY_HOOK_CONTEXT_TOKENS", 800, 0, 8000)),
            prompt_tokens=int(_number("HYBRID_MEMORY_HOOK_PROMPT_TOKENS", 300, 0, 8000)),
            min_match=_number("HYBRID_MEMORY_HOOK_MIN_MATCH", 0.3, 0, 1),
            timeout_s=_number("HYBRID_MEMORY_HOOK_TIMEOUT_S", 20, 0.1, 600),
            detach=os.environ.get("HYBRID_MEMORY_HOOK_DETACH", "1").strip() not in ("0", "false", "no"),
            min_note_match=_number("HYBRID_MEMORY_HOOK_MIN_NOTE_MATCH", 0.1, 0, 1),
        )

    @property
    def state_dir(self) -> Path:
        """Where the hooks keep their small files: capture offsets, the recent sessions, the log."""
        return self.data_dir / "hooks"


def estimate_tokens(text: str) -> int:
    """Tokens as a model counts them, estimated: about four characters each in English text."""
    return (len(text) + 3) // 4


def project_of(config: HookConfig, cwd: Path) -> str:
    """The session's project, named as the server names it from Claude Code's root (the session's cwd)."""
    return config.project or project_name(root_uri(cwd)) or "default"


def safe_name(name: str) -> str:
    """``name`` usable as a file name (a session id, a project)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:128] or "_"


def recent_sessions_file(config: HookConfig, project: str) -> Path:
    """The project's last sessions (first prompt, last time), which SessionStart shows."""
    return config.state_dir / "sessions" / f"{safe_name(project)}.json"
