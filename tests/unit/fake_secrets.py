"""Generators of FAKE secrets in the shapes their issuers publish (prefix, alphabet, length).

One seeded random source, so a corpus built from a seed is the same every run, and the
tests can build it from several seeds: a pattern that holds for one draw but not for
another (a value that happens to have no digit) shows up.
"""

from __future__ import annotations

import base64
import json
import random
import string

_rng = random.Random(20260611)
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
UPPER32 = string.ascii_uppercase + "234567"


def body(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def b64(raw: str, *, urlsafe: bool = False) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(raw.encode()).decode()


def uuid4() -> str:
    h = body(32, HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


def luhn_complete(prefix: str, length: int) -> str:
    """A card number with a valid Luhn check digit (issuer test ranges, never a real card)."""
    digits = prefix + "".join(_rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for check in string.digits:
        candidate = digits + check
        total = sum(
            (d * 2 - 9 if d * 2 > 9 else d * 2) if i % 2 else d
            for i, d in enumerate(int(c) for c in reversed(candidate))
        )
        if total % 10 == 0:
            return candidate
    raise AssertionError("unreachable: one check digit always fits")


def jwt(claims: str = '{"sub":"1234567890","name":"Ada"}', alg: str = "HS256") -> str:
    def part(raw: str) -> str:
        return b64(raw, urlsafe=True).rstrip("=")

    return ".".join((part(f'{{"alg":"{alg}","typ":"JWT"}}'), part(claims), body(43, URLSAFE)))


def telegram(bot_id: str) -> str:
    return bot_id + ":AA" + body(33, URLSAFE)


def discord(first: str, last: int = 38) -> str:
    return first + body(26 - len(first)) + "." + body(6, URLSAFE) + "." + body(last, URLSAFE)


def pem_body() -> str:
    return "\n".join(body(64, B64) for _ in range(5))


def pem(label: str) -> str:
    return f"-----BEGIN {label}PRIVATE KEY-----\n{pem_body()}\n-----END {label}PRIVATE KEY-----"


def reseed(seed: int) -> None:
    _rng.seed(seed)


def service_account() -> tuple[str, str, str]:
    """A cloud service-account key file: its key id, its private key (JSON-escaped PEM) and the JSON."""
    key_id = body(40, HEX)
    pem = (
        "-----BEGIN PRIVATE KEY-----\\n"
        + body(64, B64)
        + "\\n"
        + body(64, B64)
        + "\\n-----END PRIVATE KEY-----\\n"
    )
    account = {
        "type": "service_account",
        "project_id": "acme-prod-4821",
        "private_key_id": key_id,
        "private_key": "PEM",
        "client_email": "deployer@acme-prod-4821.iam.gserviceaccount.com",
        "client_id": body(21, string.digits),
    }
    return key_id, pem, json.dumps(account, indent=2).replace('"PEM"', '"' + pem + '"')
