"""Secrets known by what stands beside them: a generated value in a line or sentence that names a secret.

"the AWS pair (AKIA... / wJalr...)", "key id AKIA... with secret ...", "AKIA...:wJalr...":
the key id is caught by its shape, its secret has none. A value that looks machine-made
(long, letters and digits in a random mix, not words) is redacted when the same line or
sentence names a secret, token, password, key or credential, or holds a secret already
redacted (its key id). What such a line also holds and is no secret stays: hex (a commit
SHA, a UUID, a file hash), a digest after its algorithm (``sha512-...``, ``h1:...``),
base64 of plain text, paths, dotted and camelCase names, words joined by hyphens.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable

from hybrid_memory.service.redaction.values import entropy, is_code, is_placeholder

Mark = Callable[[str], str]

_TRIGGER = re.compile(
    r"(?i)(?<![a-z])(?:secrets?|tokens?|passwords?|passwd|pwd|passphrase|credentials?|creds|keys?)(?![a-z])"
    r"|\[REDACTED:"
)
_CANDIDATE = re.compile(r"(?<![A-Za-z0-9+/_.~-])[A-Za-z0-9+/_.~-]{16,}={0,2}(?![A-Za-z0-9+/=_.~-])")
_SEGMENT = re.compile(r"[^\n]+")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n[ \t]*\n")
_HEX = re.compile(r"(?:0x)?[0-9a-fA-F:-]+")
_DIGEST = re.compile(
    r"(?i)(?:sha\d*|md5|h1|blake\w*|xxh\w*|crc\d*|sri|integrity|checksum|digest|hash)[-:=]\s*$"
    r"|(?:ssh|ecdsa|sk)-[\w@.-]+\s+$"
)
"""What precedes a digest or a public key: ``sha256:``, ``integrity: ``, ``ssh-ed25519 ``."""
_WORDS = re.compile(r"(?:[A-Z]?(?=[a-z]*[aeiouy])[a-z]{2,}+|[A-Z]+(?![a-z])|[0-9]++)++")
"""Words (each with a vowel) and numbers run together: ``sortKeyForRequest2``, ``conll03``, ``HTTPServer``."""
_FILE_PATH = re.compile(r"[\w.@~-]*(?:/[\w.@~-]+)+|[\w.@~-]+(?:/[\w.@~-]*)*\.[A-Za-z]{1,5}")


def redact_by_surroundings(text: str, mark: Mark) -> str:
    """Every generated-looking value in a line or sentence that names a secret (or holds a redacted one)."""
    if not _TRIGGER.search(text):
        return text
    spans = _named_spans(text)
    if not spans:
        return text
    out, pos = [], 0
    for found in _CANDIDATE.finditer(text):
        start = found.start()
        if not any(a <= start < b for a, b in spans):
            continue
        value = found.group().rstrip(".-_~")
        if not machine_made(value) or _DIGEST.search(text[max(0, start - 30) : start]):
            continue
        out.append(text[pos:start] + mark("secret"))
        pos = start + len(value)
    out.append(text[pos:])
    return "".join(out)


def _named_spans(text: str) -> list[tuple[int, int]]:
    """The lines and the sentences of ``text`` that name a secret."""
    spans = [(m.start(), m.end()) for m in _SEGMENT.finditer(text) if _TRIGGER.search(m.group())]
    start = 0
    for end in [m.start() for m in _SENTENCE_END.finditer(text)] + [len(text)]:
        if "\n" in text[start:end] and _TRIGGER.search(text, start, end):
            spans.append((start, end))
        start = end
    return spans


def machine_made(value: str) -> bool:
    """Long, letters and digits in a random mix; not hex, a path, a name, words, or base64 of text."""
    if len(value) < 16 or is_placeholder(value) or value.startswith("[REDACTED"):
        return False
    if not re.search(r"[0-9]", value) or not re.search(r"[A-Za-z]", value) or _HEX.fullmatch(value):
        return False
    if re.match(r"(?i)(?:sha\d*|md5|h1|blake\w*)[-:_=]|AAAA[A-Z]", value) or entropy(value) < 3.5:
        return False
    if (
        "/" in value
        and _FILE_PATH.fullmatch(value)
        and (re.search(r"\.[A-Za-z]{1,5}$", value) or value == value.lower())
    ):
        return False
    short_parts = max(len(part) for part in re.split(r"[-_./+~]", value)) < 12
    if is_code(value) or (short_parts and value == value.lower()):
        return False  # a name, a version, a date: short parts joined (gpt-4o-mini-2024-07-18)
    return not _named(value) and not _base64_text(value)


def _named(value: str) -> bool:
    """Whether ``value`` reads as words and a few numbers (a name), not a random mix."""
    parts = [p for p in re.split(r"[-_./+~=]", value) if p]
    numbers = len(re.findall(r"[0-9]+", value))
    return numbers <= 3 and all(_WORDS.fullmatch(p) for p in parts)


def _base64_text(value: str) -> bool:
    """Whether ``value`` is base64 of readable text (an encoded sentence, not a key)."""
    try:
        raw = base64.b64decode(value.replace("-", "+").replace("_", "/") + "=" * (-len(value) % 4))
        decoded = raw.decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    return len(decoded) >= 8 and sum(c.isprintable() or c in "\n\t" for c in decoded) / len(decoded) > 0.95
