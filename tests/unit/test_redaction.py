"""Secrets never reach the stores: each kind is caught, counted, and ordinary text is left alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybrid_memory.service.redaction import redact
from hybrid_memory.service.redaction.shapes import TOKEN_KINDS

PEM = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc+/=\n-----END RSA PRIVATE KEY-----"
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"

CASES: list[tuple[str, str]] = [
    ("my key is sk-proj-abcdefghijklmnop1234 ok", "my key is [REDACTED:api_key] ok"),
    ("anthropic sk-ant-api03-AbCdEfGhIjKlMnOpQrSt", "anthropic [REDACTED:api_key]"),
    ("aws AKIAIOSFODNN7EXAMPLE here", "aws [REDACTED:aws_key] here"),
    ("gh ghp_0123456789abcdefghijABCDEFGHIJ012345", "gh [REDACTED:github_token]"),
    ("slack xoxb-123456789012-abcdefghij", "slack [REDACTED:slack_token]"),
    (f"token {JWT}.", "token [REDACTED:jwt]."),
    (f"key:\n{PEM}\nend", "key:\n[REDACTED:private_key]\nend"),
    ("Authorization: Bearer abc123def456ghi789", "Authorization: Bearer [REDACTED:token]"),
    ("password=hunter2!", "password=[REDACTED:secret]"),
    ('DB_PASSWORD: "correct horse battery"', "DB_PASSWORD: [REDACTED:secret]"),
    ("api_key = sk-abcdefghijklmnopqrstuvwx", "api_key = [REDACTED:api_key]"),
    ("client_secret='s3cr3t'", "client_secret=[REDACTED:secret]"),
    ("postgres://app:pa55word@db:5432/x", "postgres://app:[REDACTED:password]@db:5432/x"),
    ("card 4111 1111 1111 1111 ok", "card [REDACTED:card_number] ok"),
    ("a=1;AccountKey=Zm9vYmFy/YmF6cXV4MTIz==;x=1", "a=1;AccountKey=[REDACTED:secret];x=1"),
    ("The garage door password is tangerine.", "The garage door password is [REDACTED:password]."),
    ("my password is hunter2", "my password is [REDACTED:password]"),
    ("docker login -u ada -p Sup3rS3cret quay.io", "docker login -u ada -p [REDACTED:password] quay.io"),
    ("<password>s3cr3tPassw0rd</password>", "<password>[REDACTED:secret]</password>"),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[1] for c in CASES])
def test_each_kind_of_secret_is_replaced_once(text: str, expected: str) -> None:
    result = redact(text)
    assert result.text == expected
    assert result.count == 1


@pytest.mark.parametrize(
    "text",
    [
        "The password for the garage door is set in the app.",
        "Set max_tokens=1500 and chunk tokens: 256.",
        "I asked for a skeleton key sketch (sk-etch).",
        "The AKIA prefix marks AWS keys.",
        "order 4111 1111 1111 1112 fails the Luhn check",
        "token = next_token()",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact(text) == redact(text).__class__(text=text, count=0)


def test_several_secrets_are_all_counted() -> None:
    result = redact("password=hunter2 and token: Zx81qLm0pW3v and AKIAIOSFODNN7EXAMPLE")
    assert result.text == "password=[REDACTED:secret] and token: [REDACTED:secret] and [REDACTED:aws_key]"
    assert result.count == 3


def test_the_redaction_page_names_every_kind_of_shape() -> None:
    page = (Path(__file__).parents[2] / "docs" / "redaction.md").read_text(encoding="utf-8")
    assert sorted(kind for kind, _ in TOKEN_KINDS if f"`{kind}`" not in page) == []
