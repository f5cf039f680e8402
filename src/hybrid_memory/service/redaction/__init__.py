"""Secret redaction, as pure functions: applied to every text and tag before it is stored or embedded.

Each secret is replaced by ``[REDACTED:<kind>]`` and counted once. Three nets, in order:

1. **Shapes** (:mod:`.shapes`) that are secrets wherever they appear: PEM and PuTTY
   private keys; provider keys with a published prefix or form (model providers, code
   hosts, package and container registries, clouds, chat bots, payments, ...); JSON Web
   Tokens; a credentials file pasted as base64; card numbers (a known issuer prefix and
   a valid Luhn check, so ISBNs and phone numbers pass). Then ``Bearer`` / ``Basic``
   credentials and the password of a ``scheme://user:password@host`` URL.
2. **Names** (:mod:`.assignments`): the value of a secret-named key (``password=``,
   ``token: ``, ``"api_key": "..."``, ``export FOO_SECRET=...``, ``--password X``,
   ``<password>...</password>``) and the password a command line carries
   (``docker login -p``, ``mysql -pX``, ``curl -u user:X``, ``.netrc``).
3. **Sentences** (:mod:`.prose`): a password written in prose ("my password is
   hunter2", "use X as the password", "Passwort ist X").
4. **Context** (:mod:`.context`): a generated-looking value in a line or sentence that
   names a secret, token, password or key, or beside a key id already redacted ("the
   AWS pair (AKIA... / wJalr...)").

Nothing else: a long random-looking string on its own (a git SHA, a hash, base64 image
data) is not a secret by itself, and redacting it would cost real memories.

A missed secret is stored forever, a false positive costs a word, so the shapes lean
towards catching; ``tests/unit/secret_corpus.py`` holds the bar.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from hybrid_memory.service.redaction.assignments import redact_assignments
from hybrid_memory.service.redaction.prose import redact_prose
from hybrid_memory.service.redaction.shapes import redact_shapes
from hybrid_memory.service.redaction.surroundings import redact_by_surroundings
from hybrid_memory.service.redaction.values import (
    MARK,
    Marker,
    is_basic_credentials,
    is_placeholder,
    is_template,
    looks_generated,
    looks_random,
)

__all__ = ["MARK", "Redacted", "looks_random", "redact"]

_AUTH_HEADER = re.compile(r"(?i)\b(bearer|basic|token|digest)\s+(?!\[REDACTED)([A-Za-z0-9\-._~+/]{12,}=*)")
_URL_PASSWORD = re.compile(r"(?i)\b([a-z][a-z0-9+.-]{1,20}://[^\s:/@?#'\"]*:)([^\s@/?#'\"]+)(@)")


@dataclass(frozen=True)
class Redacted:
    text: str
    count: int
    """How many secrets were replaced."""


def redact(text: str) -> Redacted:
    """``text`` with every secret replaced by ``[REDACTED:<kind>]``, and how many there were."""
    mark = Marker()
    text = redact_shapes(text, mark)
    text = _URL_PASSWORD.sub(lambda m: _url(m, mark), text)
    text = _AUTH_HEADER.sub(lambda m: _auth(m, mark), text)
    text = redact_assignments(text, mark)
    text = redact_prose(text, mark)
    text = redact_by_surroundings(text, mark)
    return Redacted(text=text, count=mark.count)


def _url(match: re.Match[str], mark: Marker) -> str:
    if is_template(match.group(2)) or match.group(2).lower() in {"password", "passwd", "pass", "pwd", "pw"}:
        return match.group(0)
    return f"{match.group(1)}{mark('password')}{match.group(3)}"


def _auth(match: re.Match[str], mark: Marker) -> str:
    scheme, value = match.group(1), match.group(2)
    # "token" and "basic" are ordinary words ("basic dormitory-style rooms", "Token Classification"):
    # after them only a generated-looking value is a credential.
    loose = scheme.lower() in {"token", "basic", "digest"}
    if is_placeholder(value) or (loose and not looks_generated(value) and not is_basic_credentials(value)):
        return match.group(0)
    if re.fullmatch(r"[A-Z][A-Z_]+", value):  # Bearer YOUR_ACCESS_TOKEN
        return match.group(0)
    return f"{scheme} {mark('token')}"
