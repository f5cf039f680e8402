"""Secrets recognised by the name they are given: ``password=``, ``"api_key": "..."``, ``--token X``, XML.

The name and its separator stay, the value goes. A quoted value or a tight
``name=value`` is taken as meant; a spaced ``name: value`` only when the value looks
random or is all that is left of its line (a YAML or ``.env`` line), so prose such as
"the password: it is in the vault" and code such as ``token = next_token()`` stay.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hybrid_memory.service.redaction.prose import plausible_password
from hybrid_memory.service.redaction.values import (
    is_basic_credentials,
    is_code,
    is_path,
    is_placeholder,
    looks_generated,
    looks_random,
    unquote,
)

Mark = Callable[[str], str]

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SECRET_WORDS = frozenset(
    {
        "password",
        "passwd",
        "pwd",
        "pass",
        "passphrase",
        "secret",
        "token",
        "credential",
        "credentials",
        "creds",
    }
)
_KEY_WORDS = frozenset({"key", "apikey", "accountkey", "sig", "signature", "dsn", "auth", "pat"})
"""A name ending in these needs a random-looking value: "primary key: id" is not a secret."""
_NAME_HINTS = ("pass", "pwd", "secret", "token", "cred", "key", "sig", "dsn", "auth", "pat")
_LONE_KEYS = frozenset({"apikey", "accountkey", "sig", "auth", "key"})
_VALUE = r"""(?P<value>"[^"\n]{1,500}"|'[^'\n]{1,500}'|`[^`\n]{1,500}`|[^\s'"`,;&<>(){}\[\]]{1,500})"""
_ASSIGNMENT = re.compile(
    rf"""(?x)
    (?<![\w.\-])(?P<name>["']?[A-Za-z_][\w.\-]{{0,62}}["']?)
    (?P<sep>[ \t]*(?::=|=>|[:=])[ \t]*)
    {_VALUE}
    (?P<rest>[ \t]*(?:\#.*)?$)?
    """,
    re.MULTILINE,
)
_FLAG = re.compile(rf"(?<![\w-])(?P<name>--?[A-Za-z][\w-]{{1,40}})(?P<sep>=|[ \t]+){_VALUE}")
_XML = re.compile(r"<(?P<name>[A-Za-z][\w.:-]{0,40})>(?P<value>[^<\n]{1,500})</(?P=name)>")
_XML_PAIR = re.compile(
    r"""key=(?P<q>["'])(?P<name>[\w.:-]{1,60})(?P=q)\s+value=(?P<value>"[^"\n]*"|'[^'\n]*')"""
)
_COMMANDS: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = (
    # (what the text must hold, in lower case, for the pattern to have a chance; the pattern)
    # docker / podman / helm / skopeo ... ``login -p``: the registry password or token.
    (
        ("login",),
        re.compile(
            r"\blogin\b[^\n|;&]{0,300}?(?<!\S)(?:-p|--password)(?:=|[ \t]+)"
            r"(?P<value>\"[^\"\n]+\"|'[^'\n]+'|[^\s'\"]+)"
        ),
    ),
    # mysql -pSECRET (the password joined to its flag, as mysql wants it).
    (
        ("mysql", "mariadb"),
        re.compile(
            r"\b(?:mysql|mysqldump|mysqladmin|mariadb(?:-dump)?)\b[^\n|;&]{0,300}?(?<!\S)-p(?P<value>[^\s'\"]+)"
        ),
    ),
    (("sshpass",), re.compile(r"\bsshpass\s+-p[ \t]*(?P<value>\"[^\"\n]+\"|'[^'\n]+'|\S+)")),
    (("redis-cli",), re.compile(r"\bredis-cli\b[^\n|;&]{0,300}?(?<!\S)-a[ \t]+(?P<value>\S+)")),
    # curl -u user:password, wget --user=... : the part after the colon.
    (
        ("curl", "http", "wget"),
        re.compile(
            r"\b(?:curl|http|https|wget)\b[^\n|;&]{0,300}?(?<!\S)(?:-u|--user|--proxy-user)[ \t=]+"
            r"['\"]?[^\s:'\"]+:(?P<value>[^\s'\"@]+)"
        ),
    ),
    (("nickserv",), re.compile(r"(?i)\bnickserv\s+identify\s+(?:\S+\s+)?(?P<value>\S+)")),
    # .netrc: machine HOST login USER password SECRET; "username ada password X"
    (
        ("password",),
        re.compile(
            r"(?im)(?:\b(?:login|user(?:name)?)[ \t:]+(?!(?:and|or)\b)\S+[ \t,/]+|^[ \t]*)"
            r"password[ \t:]+(?P<value>\S+)"
        ),
    ),
)
_CONFIG_SET = re.compile(
    r"\bconfig(?:[ \t]+--?[\w-]+)*(?:[ \t]+set)?[ \t]+(?P<name>[^\s=]+)[ \t]+"
    r"(?P<value>\"[^\"\n]+\"|'[^'\n]+'|[^\s'\"`,;]+)"
)
"""``npm config set //registry/:_authToken X``, ``poetry config pypi-token.pypi X``."""
_NAME_THEN_VALUE = re.compile(
    r"""(?x)["']?name["']?[ \t]*:[ \t]*["']?(?P<name>[\w.-]{1,60})["']?[ \t]*(?:,\s*|\n[ \t]*(?:-[ \t]*)?)
    ["']?value["']?[ \t]*:[ \t]*(?P<value>"[^"\n]*"|'[^'\n]*'|[^\s,}]+)"""
)
"""A Kubernetes env entry or a name/value JSON pair: ``- name: DB_PASSWORD`` then ``value: X``."""


def name_kind(name: str) -> str | None:
    """``strong`` for a secret-named key, ``key`` for a key-named one, None for any other name."""
    split = re.split(r"[_.\-]+", _CAMEL.sub("_", name.strip("\"'-")))
    words = [w for w in (re.sub(r"\d+$", "", w.lower()) for w in split) if w]  # password2 -> password
    if not words:
        return None
    last = words[-1]
    if {"public", "publishable"} & set(words):
        return None
    if len(words) > 1 and "".join(words[-2:]) in _SECRET_WORDS:
        return "strong"  # pass_phrase, pass_word
    if last in _SECRET_WORDS and (last != "pass" or len(words) > 1):
        return "strong"
    if last.endswith(("password", "passwd", "passphrase", "secret", "token")):
        return "strong"  # appsecret, dbpassword, authtoken: names written as one word
    if last in _KEY_WORDS and (len(words) > 1 or last in _LONE_KEYS):
        return "key"
    earlier = set(words[:-1])
    if earlier & (_SECRET_WORDS | {"private"}) and last in {
        "key",
        "value",
        "id",
        "data",
        "b64",
        "base64",
        "json",
    }:
        return "strong"  # private_key_id, secret_value, client-key-data, GOOGLE_CREDENTIALS_BASE64
    if len(words) > 1 and words[-2] in {"api", "access"} and last in {"key", "value", "id"}:
        return "strong"
    return None


def is_secret_value(
    kind: str, name: str, sep: str, value: str, *, whole_line: bool = False, literal: bool = False
) -> bool:
    """Whether ``value``, given to a ``kind`` name with ``sep``, is a secret rather than code or prose.

    ``whole_line``: the pair is all its line holds (a YAML or ``.env`` line); ``literal``:
    the value cannot be code (a config line, a flag, an XML element), so a bare word is a value.
    """
    bare, quoted = unquote(value)
    if is_placeholder(bare) or (bare.isdigit() and len(bare) < 10):
        return False
    if bare.lower().rstrip(".:") in re.split(r"[^a-z]+", name.lower()):
        return False  # password: 'password', token=token: the name standing in for its value
    if not quoted and not (literal and re.fullmatch(r"\w+", bare)) and is_code(bare):
        return False  # `token = next_token()`, `password = settings.password`, `secret=new_secret`
    if is_path(bare.rstrip(".,:;")):
        return False  # PWD=/home/ada, ssh_key: ~/.ssh/id_ed25519: where a secret lives, not the secret
    if kind == "key":
        if name.strip("\"'").lower() == "key" and not re.search(r"[A-Z].*[a-z]|[a-z].*[A-Z]", bare):
            return False  # key: 550e8400-... (an id); a zuliprc ``key=`` is mixed case
        return looks_generated(bare) or is_basic_credentials(bare)
    if quoted or sep.strip() in {"=", ":=", "=>"} or whole_line:
        return len(bare) >= 4
    return looks_random(bare)


def redact_assignments(text: str, mark: Mark) -> str:
    """Every secret-named assignment, flag, XML element and command-line password redacted."""
    lower = text.lower()
    # Every name these patterns take holds one of the hints: most texts skip them all.
    if any(hint in lower for hint in _NAME_HINTS):
        text = _scan(text, mark)
        text = _FLAG.sub(lambda m: _flag(m, mark), text)
        text = _XML.sub(lambda m: _named(m, mark), text)
        text = _XML_PAIR.sub(lambda m: _named(m, mark), text)
        text = _NAME_THEN_VALUE.sub(lambda m: _named(m, mark), text)
        text = _CONFIG_SET.sub(lambda m: _config(m, mark), text)
    for needles, command in _COMMANDS:
        if any(needle in lower for needle in needles):
            text = command.sub(lambda m: _value(m, mark), text)
    return text


def _scan(text: str, mark: Mark) -> str:
    """``name = value`` pairs, left to right.

    Not ``re.sub``: a match that is not a secret (``note: TOKEN=...``) must not swallow
    the assignment inside its value, so the scan resumes right after the name.
    """
    out: list[str] = []
    pos = 0
    while (match := _ASSIGNMENT.search(text, pos)) is not None:
        name, sep, value = match.group("name"), match.group("sep"), match.group("value")
        kind = name_kind(name)
        before = text[text.rfind("\n", 0, match.start()) + 1 : match.start()].strip(" \t-")
        alone = match.group("rest") is not None  # nothing but a comment follows on its line
        whole_line = alone and before in {"", "export"}
        # KEY=value with nothing around it but a prefix (``//registry/:_authToken=``): a config line.
        literal = alone and sep == "=" and (whole_line or not re.search(r"[\s(,]", before))
        if kind is not None and is_secret_value(
            kind, name, sep, value, whole_line=whole_line, literal=literal
        ):
            out.append(text[pos : match.start("value")] + mark("secret"))
            pos = match.end("value")
        else:
            out.append(text[pos : match.end("name")])
            pos = match.end("name")
    out.append(text[pos:])
    return "".join(out)


def _named(match: re.Match[str], mark: Mark) -> str:
    name = match.group("name")
    kind = name_kind(name)
    # A flag's or an element's value is as meant as a tight ``name=value``'s.
    if kind is None or not is_secret_value(kind, name, "=", match.group("value"), literal=True):
        return match.group(0)
    return _swap(match, mark("secret"))


def _swap(match: re.Match[str], marker: str) -> str:
    """The match with its ``value`` group replaced by ``marker``."""
    start, end = match.start("value") - match.start(), match.end("value") - match.start()
    return match.group(0)[:start] + marker + match.group(0)[end:]


def _flag(match: re.Match[str], mark: Mark) -> str:
    """``--password=X`` is as meant as ``password=X``; ``--password X`` unless X is a word of prose."""
    if match.group("sep") != "=" and not plausible_password(
        match.group("value"), match.string[match.end() :][:40], strict=False
    ):
        return match.group(0)
    return _named(match, mark)


def _config(match: re.Match[str], mark: Mark) -> str:
    """A config command's value, when any word of the key it sets names a secret."""
    words = {w.lower() for w in re.split(r"[^A-Za-z0-9]+", _CAMEL.sub("_", match.group("name"))) if w}
    if not words & (_SECRET_WORDS | {"auth", "authtoken"}):
        return match.group(0)
    if not is_secret_value("strong", match.group("name"), "=", match.group("value"), literal=True):
        return match.group(0)
    return _swap(match, mark("secret"))


def _value(match: re.Match[str], mark: Mark) -> str:
    bare, _ = unquote(match.group("value"))
    following = match.string[match.end() :][:40]
    # A plain word is a password only at the end of its line (.netrc), not in "username and password field".
    line_end = re.match(r"[ \t]*(?:\n|$)", following) is not None
    if (
        bare.isdigit()
        or bare.startswith("-")
        or not plausible_password(match.group("value"), following, strict=not line_end)
    ):
        return match.group(0)
    start, end = match.start("value") - match.start(), match.end("value") - match.start()
    return match.group(0)[:start] + mark("password") + match.group(0)[end:]
