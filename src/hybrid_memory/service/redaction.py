"""Secret redaction, as pure functions: applied to every text and tag before it is stored or embedded.

Each secret is replaced by ``[REDACTED:<kind>]`` and counted once. Three nets, in order:

1. **Shapes** that are secrets wherever they appear: PEM private keys; provider keys
   (OpenAI / Anthropic ``sk-``, Stripe ``sk_live_``, AWS ``AKIA``, GitHub ``ghp_`` /
   ``github_pat_``, GitLab ``glpat-``, Slack ``xox?-`` and webhooks, Google ``AIza``,
   npm ``npm_``, Hugging Face ``hf_``, SendGrid ``SG.``, Mailchimp ``...-us12``,
   Twilio ``SK...``, Discord and Telegram bot tokens, PyPI, Shopify, DigitalOcean, ...);
   JSON Web Tokens; ``Bearer`` / ``Basic`` credentials; the password of a
   ``scheme://user:password@host`` URL; card numbers (a known issuer prefix and a valid
   Luhn check, so ISBNs and phone numbers pass).
2. **Assignments** of a secret-named key (``password=``, ``token: ``, ``"api_key": "..."``,
   ``export FOO_SECRET=...``, ``AccountKey=``): the name and separator stay, the value goes.
   A quoted value or a tight ``name=value`` is taken as meant; a spaced ``name: value``
   only when the value looks random (length, mixed characters, entropy), so prose such
   as "the password: it is in the vault" and code such as ``token = next_token()`` stay.
3. Nothing else: a long random-looking string on its own (a git SHA, a hash, base64
   image data) is not a secret by itself, and redacting it would cost real memories.

A missed secret is stored forever, a false positive costs a word, so the shapes lean
towards catching; ``tests/unit/secret_corpus.py`` holds the bar.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass

MARK = "[REDACTED:{kind}]"

_PEM = re.compile(
    r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
    re.DOTALL,
)
_B = r"(?<![A-Za-z0-9_\-])"  # a token starts at a word edge (hyphens and underscores join words here)
_E = r"(?![A-Za-z0-9_\-])"
_PREFIXES = "gsk_|r8_|pplx-|xai-|lin_api_|PMAK-|ATATT3|dapi|glc_|sq0atp-|sq0csp-|sk-or-v1-"
"""Prefixes of other providers' keys (Groq, Replicate, Perplexity, xAI, Linear, Postman, ...)."""
_TOKENS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(pattern))
    for kind, pattern in (
        ("jwt", rf"{_B}eyJ[A-Za-z0-9_-]{{5,}}\.eyJ[A-Za-z0-9_-]{{5,}}\.[A-Za-z0-9_-]{{5,}}"),
        ("api_key", rf"{_B}sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{{16,}}"),
        ("stripe_key", rf"{_B}(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{{16,}}{_E}"),
        ("stripe_key", rf"{_B}whsec_[A-Za-z0-9]{{24,}}{_E}"),
        ("aws_key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
        ("github_token", rf"{_B}(?:gh[pousr]_[A-Za-z0-9]{{30,}}|github_pat_[A-Za-z0-9_]{{22,}}){_E}"),
        ("gitlab_token", rf"{_B}gl(?:pat|dt|rt|ptt|cbt|soat|ft)-[A-Za-z0-9_-]{{20,}}{_E}"),
        ("slack_token", rf"{_B}xox[abposre]-[A-Za-z0-9-]{{10,}}"),
        ("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
        ("discord_webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{20,}"),
        ("api_key", r"\bAIza[0-9A-Za-z_-]{35}"),
        ("google_secret", rf"{_B}GOCSPX-[A-Za-z0-9_-]{{20,}}"),
        ("npm_token", rf"{_B}npm_[A-Za-z0-9]{{36}}{_E}"),
        ("huggingface_token", rf"{_B}hf_[A-Za-z0-9]{{30,}}{_E}"),
        ("sendgrid_key", rf"{_B}SG\.[A-Za-z0-9_-]{{16,32}}\.[A-Za-z0-9_-]{{16,64}}{_E}"),
        ("mailchimp_key", rf"{_B}[0-9a-f]{{32}}-us[0-9]{{1,2}}{_E}"),
        ("twilio_key", rf"{_B}SK[0-9a-fA-F]{{32}}{_E}"),
        (
            "discord_token",
            rf"{_B}[MNO][A-Za-z0-9_-]{{23,27}}\.[A-Za-z0-9_-]{{6}}\.[A-Za-z0-9_-]{{27,40}}{_E}",
        ),
        ("telegram_token", rf"{_B}[0-9]{{8,10}}:AA[A-Za-z0-9_-]{{33}}{_E}"),
        ("pypi_token", rf"{_B}pypi-AgE[A-Za-z0-9_-]{{50,}}"),
        ("shopify_token", rf"{_B}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{{32}}{_E}"),
        ("digitalocean_token", rf"{_B}do[por]_v1_[a-f0-9]{{64}}{_E}"),
        (
            "api_key",
            rf"{_B}(?:{_PREFIXES})[A-Za-z0-9_-]{{20,}}",
        ),
        ("vault_token", rf"{_B}hv[sbr]\.[A-Za-z0-9_-]{{24,}}"),
        ("age_key", r"AGE-SECRET-KEY-1[0-9A-Z]{58}"),
    )
)
_AUTH_HEADER = re.compile(r"(?i)\b(bearer|basic|token|digest)\s+(?!\[REDACTED)([A-Za-z0-9\-._~+/]{12,}=*)")
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{1,20}://[^\s:/@?#'\"]*:)([^\s@/?#'\"]+)(@)")
_CARD = re.compile(r"(?<![\d.-])(?:\d[ -]?){12,18}\d(?![\d.-])")
_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|3[068]|35|6011|65|64[4-9]|62")

_SECRET_WORDS = frozenset(
    {"password", "passwd", "pwd", "pass", "passphrase", "secret", "token", "credential", "credentials"}
)
_KEY_WORDS = frozenset({"key", "apikey", "accountkey", "sig", "signature", "dsn", "auth", "pat"})
"""A name ending in these needs a random-looking value: "primary key: id" is not a secret."""
_ASSIGNMENT = re.compile(
    r"""(?x)
    (?<![\w.\-])(?P<name>["']?[A-Za-z][\w.\-]{0,62}["']?)
    (?P<sep>[ \t]*(?::=|=>|[:=])[ \t]*)
    (?P<value>"[^"\n]{1,500}"|'[^'\n]{1,500}'|`[^`\n]{1,500}`|[^\s'"`,;&<>(){}\[\]]{1,500})
    """
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_PLACEHOLDER = re.compile(
    r"(?ix)^(?: |\*+|x{3,}|\.{3,}|<[^>]*>|\$\{?[\w.]+\}?|\{\{.*\}\}|%\(?\w*\)?s|\[redacted.*|"
    r"none|null|nil|true|false|undefined|empty|required|optional|string|str|your[\w-]*|changeme|example)$"
)
_CODE = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*(?:\(.*|\[.*)?$")
"""An identifier, a dotted name, a call or a subscript: code that names a secret, not the secret."""


@dataclass(frozen=True)
class Redacted:
    text: str
    count: int
    """How many secrets were replaced."""


def _entropy(value: str) -> float:
    counts = Counter(value)
    return -sum(n / len(value) * math.log2(n / len(value)) for n in counts.values())


def looks_random(value: str) -> bool:
    """Long enough, of mixed characters, and with the spread of a generated secret."""
    if len(value) < 8 or " " in value:
        return False
    classes = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]", r"[^A-Za-z0-9]"))
    return classes >= 2 and _entropy(value) >= 2.8


def _name_kind(name: str) -> str | None:
    """``strong`` for a secret-named key, ``key`` for a key-named one, None for any other name."""
    words = [w.lower() for w in re.split(r"[_.\-]+", _CAMEL.sub("_", name.strip("\"'"))) if w]
    if not words:
        return None
    last = words[-1]
    if last in _SECRET_WORDS and (last != "pass" or len(words) > 1):
        return "strong"
    if last in _KEY_WORDS and (len(words) > 1 or last in {"apikey", "accountkey", "sig"}):
        return "key"
    if len(words) > 1 and words[-2] in _SECRET_WORDS | {"api", "access"} and last in {"key", "value", "id"}:
        return "strong"
    return None


def _is_secret_value(kind: str, sep: str, value: str) -> bool:
    quoted = value[:1] in "\"'`"
    bare = value[1:-1] if quoted else value
    if not bare.strip() or _PLACEHOLDER.match(bare.strip()) or (bare.isdigit() and len(bare) < 10):
        return False
    if not quoted and _CODE.match(bare) and (not re.search(r"[0-9]", bare) or re.search(r"[.(\[]", bare)):
        return False  # `token = next_token()`, `password = settings.password`, `secret=new_secret`
    if kind == "key":
        return looks_random(bare)
    if quoted or (sep in {"=", ":=", "=>"}):
        return len(bare) >= 4
    return looks_random(bare)


def _assignments(text: str, mark: _Marker) -> str:
    """Every secret-named assignment's value redacted.

    Not ``re.sub``: a match that is not a secret (``note: TOKEN=...``) must not swallow
    the assignment inside its value, so the scan resumes right after the name.
    """
    out: list[str] = []
    pos = 0
    while (match := _ASSIGNMENT.search(text, pos)) is not None:
        kind = _name_kind(match.group("name"))
        if kind is not None and _is_secret_value(kind, match.group("sep"), match.group("value")):
            out.append(text[pos : match.start("value")] + mark("secret"))
            pos = match.end()
        else:
            out.append(text[pos : match.end("name")])
            pos = match.end("name")
    out.append(text[pos:])
    return "".join(out)


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _card(match: re.Match[str], mark: _Marker) -> str:
    digits = re.sub(r"[ -]", "", match.group(0))
    if 13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) and _luhn(digits) and len(set(digits)) > 1:
        return mark("card_number")
    return match.group(0)


class _Marker:
    def __init__(self) -> None:
        self.count = 0

    def __call__(self, kind: str) -> str:
        self.count += 1
        return MARK.format(kind=kind)


def redact(text: str) -> Redacted:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``, and how many there were."""
    mark = _Marker()
    text = _PEM.sub(lambda _: mark("private_key"), text)
    for kind, pattern in _TOKENS:
        text = pattern.sub(lambda _, k=kind: mark(k), text)  # type: ignore[misc]
    text = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}{mark('password')}{m.group(3)}", text)
    text = _AUTH_HEADER.sub(lambda m: _auth(m, mark), text)
    text = _assignments(text, mark)
    text = _CARD.sub(lambda m: _card(m, mark), text)
    return Redacted(text=text, count=mark.count)


def _auth(match: re.Match[str], mark: _Marker) -> str:
    scheme, value = match.group(1), match.group(2)
    # "token" and "basic" are ordinary words; after them only a random-looking value is a credential.
    if scheme.lower() in {"token", "basic", "digest"} and not looks_random(value):
        return match.group(0)
    return f"{scheme} {mark('token')}"


def contains_secret(text: str) -> bool:
    """Whether :func:`redact` would change ``text``."""
    return redact(text).count > 0
