"""Secrets recognised by their shape alone, wherever they appear: keys with a published prefix or form.

Each pattern follows the format its issuer documents (a fixed prefix, an alphabet, a
length), so a pasted key is caught with no label around it, and nothing that merely
resembles one (a git SHA, a UUID, a lockfile hash) is: none of these patterns matches
bare hex or bare base64. All patterns are joined into one alternation, so a text is
scanned once however many kinds there are.
"""

from __future__ import annotations

import base64
import binascii
import re
from collections.abc import Callable
from typing import NamedTuple

from hybrid_memory.service.redaction.values import DOCS_TOKEN

_B = r"(?<![A-Za-z0-9_\-])"  # a token starts at a word edge (hyphens and underscores join words here)
_E = r"(?![A-Za-z0-9_\-])"

TOKEN_KINDS: tuple[tuple[str, str], ...] = (
    # Signed tokens.
    ("jwt", rf"{_B}eyJ[A-Za-z0-9_-]{{5,}}\.eyJ[A-Za-z0-9_-]{{5,}}\.[A-Za-z0-9_-]{{5,}}"),
    ("mapbox_token", rf"{_B}sk\.eyJ[A-Za-z0-9_-]{{10,}}\.[A-Za-z0-9_-]{{10,}}"),
    # Model providers: OpenAI / Anthropic / DeepSeek ``sk-...``, OpenRouter, Groq, Replicate, ...
    ("api_key", rf"{_B}sk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{{16,}}"),
    *(
        ("api_key", rf"{_B}{prefix}[A-Za-z0-9_-]{{20,}}")
        for prefix in ("gsk_", "r8_", "pplx-", "xai-", "api_org_")
    ),
    ("huggingface_token", rf"{_B}hf_[A-Za-z0-9]{{30,}}{_E}"),
    # Code hosts and their registries.
    ("github_token", rf"{_B}gh[pousr]_[A-Za-z0-9]{{30,}}{_E}"),
    ("github_token", rf"{_B}github_pat_[A-Za-z0-9_]{{22,}}{_E}"),
    ("gitlab_token", rf"{_B}gl(?:pat|dt|rt|ptt|cbt|soat|ft|imt|agent|oas|ffct|wt)-[A-Za-z0-9_.-]{{20,}}{_E}"),
    ("gitlab_token", rf"{_B}GR1348941[A-Za-z0-9_-]{{20,}}{_E}"),
    ("bitbucket_token", rf"{_B}ATBB[A-Za-z0-9_=.-]{{28,}}{_E}"),
    ("atlassian_token", rf"{_B}AT(?:ATT3|CTT3)[A-Za-z0-9_=.-]{{20,}}"),
    # Package and container registries.
    ("npm_token", rf"{_B}npm_[A-Za-z0-9]{{36}}{_E}"),
    ("pypi_token", rf"{_B}pypi-AgE[A-Za-z0-9_-]{{50,}}"),
    ("docker_token", rf"{_B}dckr_(?:pat|oat)_[A-Za-z0-9_-]{{20,}}{_E}"),
    ("rubygems_token", rf"{_B}rubygems_[0-9a-f]{{48}}{_E}"),
    ("nuget_key", rf"{_B}oy2[a-z0-9]{{43}}{_E}"),
    ("crates_token", rf"{_B}cio[A-Za-z0-9]{{32}}{_E}"),
    ("packagist_token", rf"{_B}packagist_[a-z]{{3}}_[a-f0-9]{{60,}}{_E}"),
    ("clojars_token", rf"{_B}CLOJARS_[a-z0-9]{{60}}{_E}"),
    ("jfrog_token", rf"{_B}AKCp[A-Za-z0-9]{{60,}}"),
    ("jfrog_token", rf"{_B}cmVmdGtuOjAxOj[A-Za-z0-9+/=]{{30,}}"),
    ("terraform_token", rf"{_B}[A-Za-z0-9]{{14}}\.atlasv1\.[A-Za-z0-9_=-]{{60,}}"),
    # Clouds. Azure's identifiable keys carry a signature (``+ASt`` storage, ``+ACR`` registry, ...).
    ("aws_key", rf"{_B}A(?:KIA|SIA|GPA|IDA|ROA|NPA|NVA|IPA|BIA|CCA)[0-9A-Z]{{16}}\b"),
    ("aws_session_token", rf"{_B}IQoJb3JpZ2luX2Vj[A-Za-z0-9/+=]{{60,}}"),
    ("aws_session_token", rf"{_B}FwoGZXIvYXdzE[A-Za-z0-9/+=]{{60,}}"),
    (
        "azure_key",
        r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{30,90}(?:\+ASt|\+ACR|AzFu|\+ASb|\+AEh|ACDb|AzSe|APIM|AIoT|\+AMC)"
        r"[A-Za-z0-9+/]{4,10}={0,2}",
    ),
    ("azure_token", rf"{_B}[A-Za-z0-9]{{40,80}}AZDO[A-Za-z0-9]{{4}}{_E}"),
    ("azure_client_secret", rf"{_B}[A-Za-z0-9_~.-]{{3}}[78]Q~[A-Za-z0-9_~.-]{{31,34}}{_E}"),
    ("api_key", rf"{_B}AIza[0-9A-Za-z_-]{{35}}"),
    ("google_secret", rf"{_B}GOCSPX-[A-Za-z0-9_-]{{20,}}"),
    ("google_token", rf"{_B}ya29\.[A-Za-z0-9_-]{{20,}}"),
    ("google_token", rf"{_B}1//0[A-Za-z0-9_-]{{30,}}"),
    ("google_hmac_key", rf"{_B}GOOG1[A-Z0-9]{{50,}}{_E}"),
    ("alibaba_key", rf"{_B}LTAI[A-Za-z0-9]{{12,24}}{_E}"),
    ("tencent_key", rf"{_B}AKID[A-Za-z0-9]{{13,40}}{_E}"),
    ("digitalocean_token", rf"{_B}do[por]_v1_[a-f0-9]{{64}}{_E}"),
    ("heroku_token", rf"{_B}HRKU-[A-Za-z0-9_-]{{40,}}"),
    ("flyio_token", rf"{_B}fo1_[A-Za-z0-9_-]{{39,}}"),
    ("flyio_token", rf"{_B}FlyV1 fm[12][a-z]?_[A-Za-z0-9+/=_,-]{{30,}}"),
    ("cloudflare_key", rf"{_B}v1\.0-[a-f0-9]{{24}}-[a-f0-9]{{120,}}"),
    ("vault_token", rf"{_B}hv[sbr]\.[A-Za-z0-9_-]{{24,}}"),
    ("doppler_token", rf"{_B}dp\.(?:pt|st|sa|ct|scim|audit)\.(?:[a-z0-9_-]{{1,30}}\.)?[A-Za-z0-9]{{40,}}"),
    ("onepassword_token", rf"{_B}ops_eyJ[A-Za-z0-9+/=_-]{{50,}}"),
    ("pulumi_token", rf"{_B}pul-[a-f0-9]{{40}}{_E}"),
    ("supabase_token", rf"{_B}sb[pv]_[a-f0-9]{{40}}{_E}"),
    ("planetscale_token", rf"{_B}pscale_(?:tkn|pw|oauth)_[A-Za-z0-9_.-]{{32,}}"),
    *(("api_key", rf"{_B}{prefix}[A-Za-z0-9_-]{{20,}}") for prefix in ("dapi", "lin_api_", "PMAK-")),
    ("grafana_token", rf"{_B}glsa_[A-Za-z0-9]{{32}}_[A-Fa-f0-9]{{8}}"),
    ("grafana_token", rf"{_B}glc_[A-Za-z0-9+/=_-]{{20,}}"),
    ("sentry_token", rf"{_B}sntry[su]_[A-Za-z0-9+/=_-]{{40,}}"),
    ("newrelic_key", rf"{_B}NR(?:AK|II|JS|RA)-[A-Za-z0-9]{{20,}}{_E}"),
    ("netlify_token", rf"{_B}nfp_[A-Za-z0-9]{{36}}{_E}"),
    ("age_key", rf"{_B}AGE-SECRET-KEY-1[0-9A-Z]{{58}}"),
    # Chat and bots.
    ("slack_token", rf"{_B}x(?:ox[abposre]|app|oxe\.xox[bp]|oxe)-[A-Za-z0-9-]{{10,}}"),
    (
        "slack_webhook",
        rf"{_B}https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{{20,}}",
    ),
    (
        "discord_webhook",
        rf"{_B}https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]{{20,}}",
    ),
    ("teams_webhook", rf"{_B}https://[\w.-]+\.webhook\.office\.com/webhookb2/[\w@/-]{{40,}}"),
    *(
        (
            "discord_token",
            rf"{_B}{first}[A-Za-z0-9_-]{{23,27}}\.[A-Za-z0-9_-]{{6}}\.[A-Za-z0-9_-]{{27,40}}{_E}",
        )
        for first in "MNO"
    ),
    (
        "telegram_token",
        rf"(?:(?<=bot)|{_B})[0-9]{{5,12}}:(?:AA[A-Za-z0-9_-]{{30,34}}|[A-Za-z0-9_-]{{35}}){_E}",
    ),
    ("twitch_token", rf"{_B}oauth:[a-z0-9]{{30}}{_E}"),
    ("meta_token", rf"{_B}EAA[A-Za-z0-9]{{90,}}{_E}"),
    ("twitter_token", rf"{_B}{'A' * 20}A{{0,2}}[A-Za-z0-9%]{{30,}}"),
    ("matrix_token", rf"{_B}syt_[A-Za-z0-9_]{{4,}}_[A-Za-z0-9]{{20}}_[A-Za-z0-9]{{6}}{_E}"),
    # Payments and mail.
    *(("stripe_key", rf"{_B}{kind}_(?:live|test)_[A-Za-z0-9]{{16,}}{_E}") for kind in ("sk", "rk", "pk")),
    ("stripe_key", rf"{_B}whsec_[A-Za-z0-9]{{24,}}{_E}"),
    ("square_token", rf"{_B}sq0(?:atp|csp)-[A-Za-z0-9_-]{{22,}}"),
    ("square_token", rf"{_B}EAAA[A-Za-z0-9_-]{{22,}}"),
    ("braintree_token", rf"{_B}access_token\$(?:production|sandbox)\$[a-z0-9]{16}\$[a-f0-9]{32}"),
    ("shopify_token", rf"{_B}shp(?:at|ca|pa|ss)_[a-fA-F0-9]{{32}}{_E}"),
    ("sendgrid_key", rf"{_B}SG\.[A-Za-z0-9_-]{{16,32}}\.[A-Za-z0-9_-]{{16,64}}{_E}"),
    ("mailchimp_key", rf"{_B}[0-9a-f]{{32}}-us[0-9]{{1,2}}{_E}"),
    ("mailgun_key", rf"{_B}key-[0-9a-f]{{32}}{_E}"),
    ("twilio_key", rf"{_B}SK[0-9a-fA-F]{{32}}{_E}"),
    # Workspaces.
    ("notion_token", rf"{_B}secret_[A-Za-z0-9]{{43}}{_E}"),
    ("notion_token", rf"{_B}ntn_[0-9]{{11}}[A-Za-z0-9]{{35}}{_E}"),
    ("airtable_token", rf"{_B}pat[A-Za-z0-9]{{14}}\.[a-f0-9]{{64}}{_E}"),
    ("figma_token", rf"{_B}figd_[A-Za-z0-9_-]{{30,}}"),
    ("contentful_token", rf"{_B}CFPAT-[A-Za-z0-9_-]{{40,}}"),
    ("dropbox_token", rf"{_B}sl\.[A-Za-z0-9_-]{{120,}}"),
)


def _split(kinds: tuple[tuple[str, str], ...]) -> tuple[list[tuple[str, re.Pattern[str]]], list[_Other]]:
    """The kinds whose pattern opens with a literal character, and the others.

    The first are joined into one alternation, grouped by that first character, so the
    regex engine skips in C every position no kind can start at and tries one group where
    one can; the word edge is checked just after that first character. The others are
    scanned one by one, and only in a text that holds the literal part of their shape.
    """
    prefixed, others = [], []
    for kind, pattern in kinds:
        rest = pattern.removeprefix(_B)
        if rest != pattern and re.match(r"[A-Za-z0-9_-][^{*+?]", rest):
            prefixed.append((kind, re.compile(rf"{re.escape(rest[0])}(?<![A-Za-z0-9_\-].){rest[1:]}")))
        else:
            others.append(_Other(kind, re.compile(_NEEDLES[kind]), re.compile(pattern)))
    return prefixed, others


class _Other(NamedTuple):
    kind: str
    needle: re.Pattern[str]
    """What a text must hold for the pattern to have a chance: cheap to search for."""
    pattern: re.Pattern[str]


_NEEDLES = {
    "terraform_token": r"\.atlasv1\.",
    "azure_key": r"\+AS[tb]|\+ACR|AzFu|\+AEh|ACDb|AzSe|APIM|AIoT|\+AMC",
    "azure_token": "AZDO",
    "azure_client_secret": "Q~",
    "telegram_token": r"[0-9]{5,12}:",
    "mailchimp_key": "-us",
}


def _grouped(prefixed: list[tuple[str, re.Pattern[str]]]) -> re.Pattern[str]:
    groups: dict[str, list[str]] = {}
    for _, p in prefixed:
        first = p.pattern[: p.pattern.index("(?<!")]
        groups.setdefault(first, []).append(p.pattern[len(first) :])
    return re.compile("|".join(f"{first}(?:{'|'.join(rests)})" for first, rests in groups.items()))


_PREFIXED, _OTHERS = _split(TOKEN_KINDS)
_ANY_PREFIXED = _grouped(_PREFIXED)

_PRIVATE_KEYS = (
    # PEM, to its END line (or the end of a cut text).
    re.compile(
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----.*?"
        r"(?:-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|\Z)",
        re.DOTALL,
    ),
    # PuTTY's private lines and their MAC.
    re.compile(r"Private-Lines:\s*\d+\s*\n(?:[A-Za-z0-9+/=]+\s*\n?)+(?:Private-MAC:\s*[0-9a-fA-F]+)?"),
    # A DER body without its PEM lines (RSA PKCS#8 and PKCS#1, EC): "MIIEvQIBADANBg...".
    re.compile(
        r"(?<![A-Za-z0-9+/])(?:MII[A-Za-z0-9+/]{1,3}IBA(?:DANBgkqhkiG9w0BAQEFAAS|AKCA)|MHcCAQEE|MIGHAgEAMBMGByqGSM49)"
        r"[A-Za-z0-9+/=]{40,}(?:(?:\\n|\r?\n)[A-Za-z0-9+/=]{16,}(?![A-Za-z0-9+/=]))*"
    ),
)
"""A private key in each form it is pasted in, marked whole; in this order (a PEM block holds a DER body)."""
_BASE64_FILE = re.compile(rf"{_B}(?:e[wy]|LS0tLS1CRUdJTi)[A-Za-z0-9+/_-]{{60,}}={{0,2}}")
"""Base64 of a JSON object (``{`` encodes as ``ey``, or ``ew`` before a newline) or of a PEM block."""
_CREDENTIAL_FIELDS = re.compile(
    r'"(?:private_key|client_secret|refresh_token|password|secret_access_key|datakey|auths|token)"'
    r"|PRIVATE KEY-----"
)
_CARD = re.compile(r"(?<![\w.-])(?:\d[ -]?){12,18}\d(?![\w.-])")
"""13 to 19 digits, alone: not a piece of a UUID, a hex digest or a longer alphanumeric run."""
_UUID_GROUPS = (8, 4, 4, 4, 12)
"""How a UUID groups its digits; a card is grouped 4-4-4-4 or 4-6-5, never 8-4-4."""
_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|3[068]|35|6011|65|64[4-9]|62")

Mark = Callable[[str], str]


def redact_shapes(text: str, mark: Mark) -> str:
    """``text`` with every private key, provider token, encoded credentials file and card number marked."""
    for key in _PRIVATE_KEYS:
        text = key.sub(lambda _: mark("private_key"), text)
    text = _ANY_PREFIXED.sub(lambda m: _token(m, mark, _prefixed_kind(m)), text)
    for other in _OTHERS:
        if other.needle.search(text):
            text = other.pattern.sub(lambda m, k=other.kind: _token(m, mark, k), text)  # type: ignore[misc]
    text = _BASE64_FILE.sub(lambda m: _encoded_credentials(m, mark), text)
    return _CARD.sub(lambda m: _card(m, mark), text)


def _token(match: re.Match[str], mark: Mark, kind: str) -> str:
    return match.group(0) if DOCS_TOKEN.search(match.group(0)) else mark(kind)


def _prefixed_kind(match: re.Match[str]) -> str:
    """The kind of the first pattern that matches where the alternation did (the one it took)."""
    return next(kind for kind, p in _PREFIXED if p.match(match.string, match.start()))


def _encoded_credentials(match: re.Match[str], mark: Mark) -> str:
    """A service-account key, registry login, private key or other credentials file pasted as base64."""
    raw = match.group(0)
    try:
        decoded = base64.b64decode(raw.replace("-", "+").replace("_", "/") + "=" * (-len(raw) % 4))
    except (binascii.Error, ValueError):
        return raw
    if _CREDENTIAL_FIELDS.search(decoded.decode("utf-8", "replace")):
        return mark("credentials")
    return raw


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _card(match: re.Match[str], mark: Mark) -> str:
    groups = tuple(len(g) for g in match.group(0).split("-"))
    if len(groups) > 1 and groups == _UUID_GROUPS[: len(groups)]:
        return match.group(0)
    digits = re.sub(r"[ -]", "", match.group(0))
    if 13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) and _luhn(digits) and len(set(digits)) > 1:
        return mark("card_number")
    return match.group(0)
