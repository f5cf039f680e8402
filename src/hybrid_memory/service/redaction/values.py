"""What a secret's value looks like, shared by the nets: random enough, not a placeholder, not code."""

from __future__ import annotations

import base64
import binascii
import math
import re
from collections import Counter

MARK = "[REDACTED:{kind}]"

PLACEHOLDER = re.compile(
    r"(?ix)^(?: |\*+|x{3,}|\.{3,}|<[^>]*>|\$.*|\{\{.*\}\}|\{[\w.]*\}|%\(?\w*\)?s|\[redacted.*|"
    r"none|null|nil|true|false|undefined|empty|required|optional|string|str|your[\w-]*|changeme|example|"
    r"redacted|placeholder|todo|tbd|n/?a)$"
)
"""A value that stands for a secret without being one: ``${DB_PASSWORD}``, ``<your-key>``, ``***``."""

CODE = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?:\(.*|\[.*)?$")
"""An identifier, a dotted name, a call or a subscript: code that names a secret, not the secret."""


class Marker:
    """Replaces a secret by ``[REDACTED:<kind>]`` and counts the replacements."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, kind: str) -> str:
        self.count += 1
        return MARK.format(kind=kind)


def entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def looks_random(value: str) -> bool:
    """Long enough, of mixed characters, and with the spread of a generated secret."""
    if len(value) < 8 or " " in value:
        return False
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
    return classes >= 2 and entropy(value) >= 2.8


def looks_generated(value: str) -> bool:
    """Random enough to be a machine-made key: long, with letters and digits, and a wide spread."""
    return (
        len(value) >= 16
        and " " not in value
        and bool(re.search(r"[0-9]", value))
        and bool(re.search(r"[A-Za-z]", value))
        and entropy(value) >= 3.2
    )


_PATH = re.compile(r"(?:~|\.{1,2}|[A-Za-z]:)?[/\\]([\w.@-]+(?:[/\\][\w.@-]*)*)")


def is_path(value: str) -> bool:
    """A file path (``/home/ada``, ``~/.ssh/id_ed25519``), not base64 that happens to start with ``/``."""
    found = _PATH.fullmatch(value)
    return found is not None and not any(looks_generated(p) for p in re.split(r"[/\\]", found.group(1)))


_CASE_SWITCH = re.compile(r"(?<=[a-z])[A-Z]|(?<=[A-Z])[a-z]")


def is_code(value: str) -> bool:
    """An identifier, attribute or call (``settings.password``, ``next_token()``), not a generated value."""
    if not CODE.match(value) or any(looks_generated(part) for part in re.split(r"[.(\[]", value)):
        return False
    if len(value) >= 10 and len(_CASE_SWITCH.findall(value)) >= 0.4 * len(value):
        return False  # cFlOMXZMMExUcTkw: the case flips too often for camelCase words
    return not re.search(r"[0-9]", value) or bool(re.search(r"[.(\[]", value))


def unquote(value: str) -> tuple[str, bool]:
    """``value`` without its quotes, and whether it had them."""
    if len(value) >= 2 and value[0] in "\"'`" and value[-1] == value[0]:
        return value[1:-1], True
    return value, False


def is_template(value: str) -> bool:
    """A value filled in elsewhere: ``${DB_PASSWORD}``, ``{{ password }}``, ``<password>``, ``***``."""
    return value.startswith(("$", "{", "<", "%(", "***", "[REDACTED"))


DOCS_TOKEN = re.compile(r"(?i)(?:^|[-_])your[-_]|x{4,}|placeholder|\.\.\.")
"""What a value in documentation is written with: ``xoxb-your-bot-token``, ``ghp_xxxx...``."""


def is_placeholder(value: str) -> bool:
    v = value.strip()
    return not v or bool(PLACEHOLDER.match(v)) or v.startswith("[REDACTED") or bool(DOCS_TOKEN.search(v))


def is_basic_credentials(value: str) -> bool:
    """Whether ``value`` is base64 of ``user:password``, as a Basic header carries."""
    try:
        decoded = base64.b64decode(value + "=" * (-len(value) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return re.fullmatch(r"[^\s:]{1,64}:\S{1,128}", decoded) is not None
