"""Passwords written in a sentence: "my password is hunter2", "use Tr0ub4dor&3 as the password".

The word before the value says it is a password; the value decides whether there is
one. A quoted value, or one with digits, symbols or inner capitals, is taken; a plain
word only when it ends its clause ("the garage password is tangerine.") and is not
one of the words prose puts there ("the password is wrong", "is stored in the vault",
"is case sensitive"). A key or token named in prose is taken only when it looks generated.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from hybrid_memory.service.redaction.values import is_code, is_placeholder, looks_random, unquote

Mark = Callable[[str], str]

_PASSWORD = (
    r"(?:pass(?:word|wd|phrase|code)|pw|passwort|kennwort|mot\s+de\s+passe|contrase[ñn]a|senha|"
    r"wachtwoord|l[öo]senord|salasana|has[łl]o|пароль)"
)
_PASSWORD_HINTS = (
    *("pass", "pw", "kennwort", "contrase", "senha", "wachtwoord", "senord", "salasana", "hasło", "haslo"),
    *("пароль", "cred"),
)
_NAMES = re.compile(rf"(?i){_PASSWORD}|pass|pwd|secret|token|passwords?")
_VALUE = r"(?P<value>\"[^\"\n]{1,200}\"|'[^'\n]{1,200}'|`[^`\n]{1,200}`|[^\s\"'`]{1,200})"
_OF = (
    r"(?:[ \t]+(?:for|of|to|on|at|f[üu]r|pour|de|para|per|voor|для)(?:[ \t]+[^\s,;:!?=]*[^\s.,;:!?=]){1,4}?)?"
)
"""The thing a password is for: "the password for the prod db is ..."."""
_IS = (
    r"(?:[ \t]*[:=][ \t]*|['\u2019]s[ \t]+|\?[ \t]+it['\u2019]s[ \t]+|"
    r"[ \t]+(?:is|was|will[ \t]+be|would[ \t]+be|should[ \t]+be|ist|lautet|war|est|était|es|era|é|è)"
    r"(?:[ \t]*:)?[ \t]+)"
    r"(?:(?:now|still|just|simply|actually|currently|jetzt|maintenant|ahora)[ \t]+)?"
)
_DETERMINERS = r"(?:(?:the|my|our|your|his|her|its|their|a|an|new|this)\s+)*"
_SENTENCES = (
    # "my password is hunter2", "the password for root: X", "Passwort ist X", "pw = X"
    (re.compile(rf"(?i)\b{_PASSWORD}{_OF}{_IS}{_VALUE}"), False),
    # "set the root password to X", "changed my password to X"
    (
        re.compile(
            rf"(?i)\b(?:set|sets|change[ds]?|reset|resets|update[ds]?|rotated?)\s+{_DETERMINERS}"
            rf"(?:[^\s.,;:!?]+\s+){{0,2}}?{_PASSWORD}\s+(?:to|as)\s+{_VALUE}"
        ),
        False,
    ),
    # "the password was changed to X", "password has been reset to X"
    (
        re.compile(
            rf"(?i)\b{_PASSWORD}\s+(?:(?:was|is|has\s+been|got|is\s+now)\s+)?"
            rf"(?:changed|set|reset|updated|rotated)\s+to\s+{_VALUE}"
        ),
        False,
    ),
    # "use Tr0ub4dor&3 as the password", "with hunter2 as password"
    (
        re.compile(
            rf"(?i)\b(?:use|used|using|try|tried|with|take)\s+{_VALUE}\s+as\s+{_DETERMINERS}"
            rf"(?:[^\s.,;:!?]+\s+){{0,2}}?{_PASSWORD}(?=\s*(?:[.,;:!?)]|$)|\s+(?:for|on|to|and|but|here|now)\b)"
        ),
        True,
    ),
    # "log in as admin with password hunter2!", "user admin, password Tr0ub4dor&3"
    (
        re.compile(
            rf"(?i)(?:\b(?:and|with|use|try|enter|type)|,)\s+(?:(?:the|a|my|this)\s+)?{_PASSWORD}\s+{_VALUE}"
        ),
        True,
    ),
    # "user: ada pass: Hunter2!" (a bare "pass" is a word of prose: the value must look made up)
    (re.compile(rf"(?i)\bpass[ \t]*[:=][ \t]*{_VALUE}"), True),
    # "creds: admin/hunter2", "credentials are root:toor"
    (
        re.compile(
            r"(?i)\bcred(?:s|entials)?\s*(?:[:=]|\s+(?:are|is))\s+(?!\[REDACTED)[^\s/:]+[/:](?P<value>[^\s,;]{3,})"
        ),
        True,
    ),
)
_KEY_SENTENCE = re.compile(
    rf"(?i)\b(?:api[ _-]?key|access[ _-]?key|secret[ _-]?key|(?:auth|access|bot|api|refresh)[ _-]?token|"
    rf"token|secret|client[ _-]?secret|app[ _-]?secret|license[ _-]?key){_OF}(?:[ \t]*\[[^\]\n]{{0,20}}\])?"
    rf"(?:{_IS}|[ \t]+){_VALUE}"
)
_STOP = frozenset(
    """
    the a an in on at of to it its this that these those what which your my our his her their not no
    never always also only still just now set stored saved kept required wrong incorrect invalid valid
    correct right too very case same different missing expired empty blank optional mandatory weak
    strong long short secure insecure ok okay fine good bad there here given provided sent shown used
    needed known plain plaintext cleartext simple easy hard default something anything nothing everything
    sensitive insensitive secret private public unique enough protected being one part based how where
    when why who whatever available unavailable falsch richtig leer erforderlich ungültig requis vide
    invalide incorrecta requerida vacía inválida inválido errada vazio obrigatória sbagliata vuota fout
    leeg verplicht
    """.split()  # noqa: SIM905 (a word list reads best as words)
)
_CLAUSE_END = re.compile(r"[.,;:!?)\]\"']*(?:\s*$|\s*\n|[.,;:!?)\]]|\s+(?:and|but|so|then|or|—|-)\s)")
_TRAILING = ".,;:?)]\"'*"


def plausible_password(value: str, following: str, *, strict: bool) -> bool:
    """Whether ``value`` after a password word is one; ``strict``: a plain word never is."""
    bare, quoted = unquote(value.rstrip(",;"))
    if quoted:
        return (
            len(bare) >= 3 and not is_placeholder(bare) and not _NAMES.fullmatch(bare) and bare not in _STOP
        )
    bare = bare.rstrip(_TRAILING)
    if len(bare) < 4 or is_placeholder(bare) or bare.lower() in _STOP or _NAMES.fullmatch(bare):
        return False  # "this.password = password;": the word standing in for its value
    if not re.search(r"[A-Za-z]", bare) and not bare.isdigit():
        return False  # "€68-130", "2024-01-15": a price or a date, not a password
    if bare.startswith(("http://", "https://", "/", "~", "%", "{", "<", "@")) or (
        is_code(bare) and re.search(r"[.(\[_]", bare)
    ):
        return False
    if re.fullmatch(r"(?:[A-Z][a-z]+){2,}", bare):  # "password: SecretStr": a type or class name
        return False
    # A word as prose writes it (lower case, Capitalised, CAPITALS, or joined by hyphens), not "NbNCswIF".
    if re.fullmatch(r"[a-z]+(?:-[a-z]+)*|[A-Z][a-z]+(?:-[a-z]+)*|[A-Z]+", bare):
        if strict or bare.lower().endswith(("ed", "ing", "ly")):
            return False
        return _CLAUSE_END.match(following) is not None
    return True


def redact_prose(text: str, mark: Mark) -> str:
    """Every password a sentence gives, and every generated-looking key a sentence names, redacted."""
    lower = text.lower()
    # The patterns are case-insensitive, which keeps the regex engine from skipping ahead to
    # a literal; a substring test in lower case does it for them.
    if any(hint in lower for hint in _PASSWORD_HINTS):
        for pattern, strict in _SENTENCES:
            text = _resuming_sub(pattern, text, lambda m, s=strict: _password(m, mark, s))  # type: ignore[misc]
    if any(hint in lower for hint in ("key", "token", "secret")):
        text = _resuming_sub(_KEY_SENTENCE, text, lambda m: _key(m, mark))
    return text


def _resuming_sub(pattern: re.Pattern[str], text: str, replace: Callable[[re.Match[str]], str]) -> str:
    """``pattern.sub(replace, text)``, except that a match left as it was does not hide a later one.

    In "AWS Secret Access Key [None]: X" the lead "Secret" fails on "Access"; ``re.sub``
    would resume after "Access" and never see "Access Key [None]: X".
    """
    out: list[str] = []
    pos = 0
    while (match := pattern.search(text, pos)) is not None:
        replaced = replace(match)
        if replaced == match.group(0):
            out.append(text[pos : match.start() + 1])
            pos = match.start() + 1
        else:
            out.append(text[pos : match.start()] + replaced)
            pos = match.end()
    out.append(text[pos:])
    return "".join(out)


def _replace(match: re.Match[str], mark: Mark, kind: str) -> str:
    value = match.group("value")
    _, quoted = unquote(value)
    keep = len(value) - len(value.rstrip(_TRAILING)) if not quoted else 0
    start, end = match.start("value") - match.start(), match.end("value") - match.start() - keep
    return match.group(0)[:start] + mark(kind) + match.group(0)[end:]


def _password(match: re.Match[str], mark: Mark, strict: bool) -> str:
    following = match.string[match.end("value") :][:40]
    if not plausible_password(match.group("value"), following, strict=strict):
        return match.group(0)
    return _replace(match, mark, "password")


def _key(match: re.Match[str], mark: Mark) -> str:
    bare, quoted = unquote(match.group("value"))
    bare = bare if quoted else bare.rstrip(_TRAILING)
    if is_placeholder(bare) or not looks_random(bare) or len(bare) < 12 or not re.search(r"[0-9]", bare):
        return match.group(0)
    return _replace(match, mark, "secret")
