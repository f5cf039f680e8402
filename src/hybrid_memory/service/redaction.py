"""Secret redaction, as a pure function: applied to every text before it is stored or embedded.

What is caught (each replaced by ``[REDACTED:<kind>]``, counted once):

- PEM private keys (``-----BEGIN ... PRIVATE KEY-----`` to its ``END`` line);
- provider API keys: OpenAI / Anthropic ``sk-...``, AWS access key ids ``AKIA...`` /
  ``ASIA...``, GitHub tokens ``ghp_`` / ``gho_`` / ``ghu_`` / ``ghs_`` / ``ghr_`` /
  ``github_pat_``, Slack ``xox[abprs]-...``, Google ``AIza...``;
- JSON Web Tokens (three base64url parts, the first two starting ``eyJ``);
- ``Bearer <token>`` (the word is kept);
- assignments of a secret-looking name: ``password=...``, ``api_key: ...``,
  ``secret = "..."``, ``token=...`` (the name is kept, the value goes).

False positives cost a word of context; a missed secret is stored forever, so the
patterns lean towards catching. Ordinary prose about passwords ("the password is
in the vault") is left alone: only an assignment (``=`` or ``:``) is redacted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

MARK = "[REDACTED:{kind}]"

_PEM = re.compile(
    r"-----BEGIN (?P<label>[A-Z0-9 ]*)PRIVATE KEY-----.*?-----END (?P=label)PRIVATE KEY-----",
    re.DOTALL,
)
_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("jwt", re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}")),
    ("api_key", re.compile(r"\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{16,}")),
    ("aws_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b")),
    ("github_token", re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})")),
    ("slack_token", re.compile(r"\bxox[abprs]-[A-Za-z0-9-]{10,}")),
    ("api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}")),
)
_BEARER = re.compile(r"(?i)\b(bearer)\s+(?!\[REDACTED)[A-Za-z0-9\-._~+/]{12,}=*")
_ASSIGNMENT = re.compile(
    r"""(?ix)
    \b(?P<name>[a-z0-9_.-]*(?:password|passwd|pwd|passphrase|secret|api[_-]?key|access[_-]?key
        |auth[_-]?token|access[_-]?token|refresh[_-]?token|token|private[_-]?key|client[_-]?secret))
    (?P<sep>\s*[:=]\s*)
    (?!\[REDACTED)
    (?P<value>"[^"\n]+"|'[^'\n]+'|[^\s,;'"]+)
    """
)


@dataclass(frozen=True)
class Redacted:
    text: str
    count: int
    """How many secrets were replaced."""


def redact(text: str) -> Redacted:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``, and how many there were."""
    count = 0

    def mark(kind: str) -> str:
        nonlocal count
        count += 1
        return MARK.format(kind=kind)

    text = _PEM.sub(lambda _: mark("private_key"), text)
    for kind, pattern in _TOKENS:
        text = pattern.sub(lambda _, k=kind: mark(k), text)  # type: ignore[misc]
    text = _BEARER.sub(lambda m: f"{m.group(1)} {mark('token')}", text)
    text = _ASSIGNMENT.sub(lambda m: f"{m.group('name')}{m.group('sep')}{mark('secret')}", text)
    return Redacted(text=text, count=count)
