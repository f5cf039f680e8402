"""The HTTP settings an operator writes: allow-lists, loopback, the token and its file."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from hybrid_memory.backends.reconnecting import without_credentials
from hybrid_memory.server.http import allowed_hosts, allowed_origins
from hybrid_memory.settings import HttpSettings


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("TOKEN", "TOKEN_FILE", "HOST", "PORT", "ALLOWED_HOSTS", "ALLOWED_ORIGINS"):
        monkeypatch.delenv(f"HYBRID_MEMORY_HTTP_{name}", raising=False)


def test_allowed_hosts_from_the_environment_are_comma_separated_and_a_bare_name_takes_any_port(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HYBRID_MEMORY_HTTP_ALLOWED_HOSTS", " memory.example , 10.0.0.5:9000,,")
    http = HttpSettings(host="0.0.0.0", port=8765, token="t" * 16)
    assert allowed_hosts(http) == [
        "127.0.0.1:8765",
        "localhost:8765",
        "[::1]:8765",
        "memory.example",
        "memory.example:*",
        "10.0.0.5:9000",
    ]


def test_a_specific_bind_address_is_answered_under_its_own_name() -> None:
    assert allowed_hosts(HttpSettings(host="192.168.1.5", token="t" * 16))[-1] == "192.168.1.5:8765"
    assert allowed_hosts(HttpSettings(host="fd00::5", token="t" * 16))[-1] == "[fd00::5]:8765"


def test_default_origins_are_the_loopback_pages_on_the_port() -> None:
    assert allowed_origins(HttpSettings(port=9000)) == [
        "http://127.0.0.1:9000",
        "http://localhost:9000",
        "http://[::1]:9000",
    ]


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("127.0.0.2", True),
        ("::1", True),
        ("localhost", True),
        ("0.0.0.0", False),
        ("::", False),
        ("10.1.2.3", False),
        ("memory.example", False),
    ],
)
def test_loopback_is_only_this_machine(host: str, loopback: bool) -> None:
    assert HttpSettings(host=host).loopback is loopback


def test_the_token_file_gives_its_first_line(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("  0123456789abcdefXYZ  \nignored\n")
    http = HttpSettings(token_file=secret)
    assert http.bearer_token is not None
    assert http.bearer_token.get_secret_value() == "0123456789abcdefXYZ"
    assert HttpSettings(token_file=secret, port=1).bearer_token == http.bearer_token  # revalidated alike


def test_a_token_and_a_token_file_together_are_refused(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("0123456789abcdefXYZ\n")
    with pytest.raises(
        ValidationError, match="set HYBRID_MEMORY_HTTP_TOKEN or HYBRID_MEMORY_HTTP_TOKEN_FILE, not both"
    ):
        HttpSettings(token="0123456789abcdefXYZ", token_file=secret)


def test_an_empty_token_file_is_refused_as_too_short(tmp_path: Path) -> None:
    secret = tmp_path / "token"
    secret.write_text("")
    with pytest.raises(ValidationError, match="the HTTP token must have at least 16 characters"):
        HttpSettings(token_file=secret)


def test_addresses_in_messages_lose_their_credentials() -> None:
    assert without_credentials("bolt://neo4j:hunter2@db.example:7687") == "bolt://db.example:7687"
    assert without_credentials("http://127.0.0.1:6333") == "http://127.0.0.1:6333"
