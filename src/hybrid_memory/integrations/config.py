"""The hooks' settings from ``HYBRID_MEMORY_*``, read with the standard library (no pydantic)."""

from __future__ import annotations

import os

from hybrid_memory.host.lock import data_dir_named

TYPE_CHECKING = False
if TYPE_CHECKING:  # ``typing`` and ``pathlib`` are among the slowest of a prompt hook's imports
    from pathlib import Path
    from typing import Any

    from hybrid_memory.host.lock import StrPath

CAPTURE_LOCK = "capture.lock"
"""Held shared by every capture in progress, so a starting session can wait for them (capture.settled)."""


class HookVariable:
    """One ``HYBRID_MEMORY_HOOK_*`` variable: read, and documented in docs/configuration.md, from here."""

    __slots__ = ("default", "field", "high", "low", "meaning")

    def __init__(
        self, field: str, default: int | float | bool, low: float = 0, high: float = 0, meaning: str = ""
    ) -> None:
        self.field, self.default, self.low, self.high, self.meaning = field, default, low, high, meaning

    @property
    def env(self) -> str:
        return f"HYBRID_MEMORY_HOOK_{self.field.upper()}"

    def read(self) -> float | bool:
        raw = os.environ.get(self.env, "").strip()
        if not raw:
            return self.default
        if isinstance(self.default, bool):
            return raw.lower() not in ("0", "false", "no")
        try:
            value = float(raw)
        except ValueError:
            raise ValueError(
                f"{self.env}={raw!r} is not a number; set it to one between {self.low:g} and {self.high:g}"
            ) from None
        if not self.low <= value <= self.high:
            raise ValueError(
                f"{self.env}={raw!r} is out of range; set it between {self.low:g} and {self.high:g}"
            )
        return value


HOOKS_INTRO = "``HYBRID_MEMORY_HOOK_*``: the Claude Code plugin's hooks (capture and what they inject)."
HOOK_VARIABLES = (
    HookVariable(
        "context_tokens",
        800,
        0,
        8000,
        "The budget of the project context injected at session start (current notes, the most recent "
        "session's digest, pinned memory).",
    ),
    HookVariable(
        "prompt_tokens",
        300,
        0,
        8000,
        "The budget of what one prompt gets injected: only strong matches, each cited.",
    ),
    HookVariable("min_match", 0.3, 0, 1, "The least ``match`` a memory needs to be injected for a prompt."),
    HookVariable(
        "min_note_match",
        0.1,
        0,
        1,
        "The least ``match`` a note (a decision, rule, preference, fact) needs to be injected for a prompt: "
        "lower than a turn's, a note being short, distilled and current.",
    ),
    HookVariable(
        "timeout_s", 20.0, 0.1, 600, "How long a hook waits for the host (which it starts when none runs)."
    ),
    HookVariable(
        "detach",
        True,
        meaning="Capture in a background process, so the session never waits for it (``0``: finish before "
        "returning).",
    ),
)


class HookConfig:
    """The hooks' settings: the data dir and project (``HYBRID_MEMORY_PROJECT``: when set, every session
    uses it, as the server does) as the server reads them, and :data:`HOOK_VARIABLES`.

    A plain class: a dataclass loads ``inspect`` and a named tuple ``collections``, which would cost
    a prompt hook a tenth and a twentieth of its time. Its paths are strings (a ``Path`` given is
    taken as well): ``pathlib`` is another tenth.
    """

    __slots__ = (
        "context_tokens",
        "data_dir",
        "detach",
        "min_match",
        "min_note_match",
        "project",
        "prompt_tokens",
        "timeout_s",
    )

    def __init__(
        self,
        data_dir: StrPath,
        project: str | None,
        context_tokens: int,
        prompt_tokens: int,
        min_match: float,
        timeout_s: float,
        detach: bool,
        min_note_match: float = 0.1,
    ) -> None:
        self.data_dir, self.project = data_dir, project
        self.context_tokens, self.prompt_tokens = context_tokens, prompt_tokens
        self.min_match, self.min_note_match = min_match, min_note_match
        self.timeout_s, self.detach = timeout_s, detach

    def _replace(self, **changes: Any) -> HookConfig:
        """These settings with ``changes`` (as a named tuple's ``_replace``)."""
        return HookConfig(**{**{name: getattr(self, name) for name in self.__slots__}, **changes})

    @classmethod
    def from_env(cls) -> HookConfig:
        read = {variable.field: variable.read() for variable in HOOK_VARIABLES}
        return cls(
            data_dir=data_dir_named(),
            project=os.environ.get("HYBRID_MEMORY_PROJECT", "").strip() or None,
            context_tokens=int(read["context_tokens"]),
            prompt_tokens=int(read["prompt_tokens"]),
            min_match=float(read["min_match"]),
            timeout_s=float(read["timeout_s"]),
            detach=bool(read["detach"]),
            min_note_match=float(read["min_note_match"]),
        )

    @property
    def state_dir(self) -> str:
        """Where the hooks keep their small files: the captures that wait, the log, the injections'."""
        return hooks_dir(self.data_dir)


def hooks_dir(data_dir: StrPath) -> str:
    """The data dir's folder of the hooks' small files (:attr:`HookConfig.state_dir`)."""
    return os.path.join(data_dir, "hooks")


def estimate_tokens(text: str) -> int:
    """Tokens as a model counts them, estimated: about four characters each in English text."""
    return (len(text) + 3) // 4


def project_of(config: HookConfig, cwd: Path) -> str:
    """The session's project, named as the server names it from Claude Code's root (the session's cwd):
    its repository, else the directory (:mod:`hybrid_memory.projects`)."""
    from hybrid_memory.projects import project_name, root_uri  # off a prompt's path (urllib loads slowly)

    return config.project or project_name(root_uri(cwd)) or "default"


def safe_name(name: str) -> str:
    """``name`` usable as a file name (a session id, a project)."""
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in name)[:128] or "_"
