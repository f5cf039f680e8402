"""The activity line: what a turn did with files and commands, written once, read back once.

Capture records each tool use as data, a dict with a ``verb`` and its fields, stored with
the message (its ``activity``):

- ``{"verb": "edited" | "not edited" | "read", "path": …}``
- ``{"verb": "tests", "command": …, "outcome": "passed" | "failed"}``
- ``{"verb": "ran", "command": …, "outcome": "ok" | "failed", "error": … (when it failed)}``

The message's text, which the model reads, shows each as one line (:func:`render`):
"(edited src/x.py)", "(tests failed: pytest -q)", "(ran make build → failed: KeyError: 'user')".
:func:`parse` reads such a line back, for messages stored before the fields were (their text is
all they have). Standard library only: the capture hook imports it.
"""

from __future__ import annotations

import re

VERBS = ("edited", "not edited", "read", "tests", "ran")
_LINE = re.compile(
    r"^\((?:(?P<verb>edited|not edited|read) (?P<path>.+)|tests (?P<tests>passed|failed): (?P<test>.+)"
    r"|ran (?P<command>.+) → (?P<outcome>ok|failed)(?:: (?P<error>.+))?)\)$"
)


def render(use: dict[str, str]) -> str:
    """The line the message's text shows for ``use``."""
    verb = use["verb"]
    if verb == "tests":
        return f"(tests {use['outcome']}: {use['command']})"
    if verb == "ran":
        error = use.get("error")
        return f"(ran {use['command']} → {use['outcome']}{f': {error}' if error else ''})"
    return f"({verb} {use['path']})"


def parse(line: str) -> dict[str, str] | None:
    """The use an activity line shows; None for any other line."""
    found = _LINE.match(line.strip())
    if found is None:
        return None
    if found.group("verb"):
        return {"verb": found.group("verb"), "path": found.group("path").strip()}
    if found.group("tests"):
        return {"verb": "tests", "command": found.group("test"), "outcome": found.group("tests")}
    use = {"verb": "ran", "command": found.group("command"), "outcome": found.group("outcome")}
    if found.group("error"):
        use["error"] = found.group("error")
    return use


def uses_in(text: str) -> list[dict[str, str]]:
    """The uses a message's text shows, in order (what a message stored without its fields did)."""
    return [use for use in (parse(line) for line in text.splitlines()) if use is not None]


def words(text: str) -> str:
    """``text`` without its activity lines: what was said."""
    return "\n".join(line for line in text.splitlines() if parse(line) is None)
