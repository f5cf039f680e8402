"""Ids and UUIDs through the real server: a UUID is never a card number, an id never refuses a thread."""

from __future__ import annotations

import json
import logging
import random
import re
import uuid
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from hybrid_memory.service.redaction import redact
from hybrid_memory.settings import Settings
from hybrid_memory.transfer import export_file
from hybrid_memory.transfer.format import ITEM_KEY
from tests.tools.helpers import call
from tests.unit.fake_secrets import luhn_complete, reseed

ISSUE_UUID = "892ef7f4-6e62-4945-9372-5757e7f4aba5"
_OLD_CARD = re.compile(r"(?<![\d.-])(?:\d[ -]?){12,18}\d(?![\d.-])")
_CARD_PREFIX = re.compile(r"4|5[1-5]|2[2-7]|3[47]|3[068]|35|6011|65|64[4-9]|62")


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def passes_as_card(text: str) -> bool:
    """Whether a run of the UUID's digits has a card's prefix and Luhn check (a digits-only rule's card)."""
    for found in _OLD_CARD.finditer(text):
        digits = re.sub(r"[ -]", "", found.group())
        if 13 <= len(digits) <= 19 and _CARD_PREFIX.match(digits) and _luhn(digits):
            return True
    return False


def luhn_uuids(count: int, seed: int = 28) -> list[str]:
    """``count`` version-4 UUIDs whose middle digits pass as a card number, like ``ISSUE_UUID``.

    The second group ends in two digits after a letter, the third and fourth are digits,
    the fifth opens with four digits: a 14-digit run "62-4945-9372-5757" between letters.
    """
    rng = random.Random(seed)
    hexdigits, letters, digits = "0123456789abcdef", "abcdef", "0123456789"
    found = [ISSUE_UUID]
    while len(found) < count:
        pick = lambda alphabet, n: "".join(rng.choice(alphabet) for _ in range(n))  # noqa: E731
        candidate = (
            f"{pick(hexdigits, 8)}-{pick(hexdigits, 1)}{pick(letters, 1)}{pick(digits, 2)}-"
            f"4{pick(digits, 3)}-{rng.choice('89')}{pick(digits, 3)}-"
            f"{pick(digits, 4)}{pick(letters, 1)}{pick(hexdigits, 7)}"
        )
        if passes_as_card(candidate) and candidate not in found:
            found.append(candidate)
    return found


UUIDS = luhn_uuids(40)


def test_the_uuids_are_the_hard_case_and_redaction_leaves_them_whole() -> None:
    assert all(passes_as_card(u) for u in UUIDS)
    assert [u for u in UUIDS if redact(u).text != u] == []
    assert [u for u in UUIDS if redact(u.upper()).text != u.upper()] == []
    assert [u for u in UUIDS if redact(f"request {u}: done").count] == []


def test_random_uuids_are_never_touched() -> None:
    """bench/redaction.py measures 200,000; a tenth of them here (about 10 pass as a card by digits alone)."""
    rng = random.Random(7)
    uuids = [str(uuid.UUID(int=rng.getrandbits(128), version=4)) for _ in range(20_000)]
    assert sum(passes_as_card(u) for u in uuids) > 0
    assert [u for u in uuids if redact(u).text != u] == []


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("card 4111 1111 1111 1111 ok", False),
        ("card 4111-1111-1111-1111 ok", False),
        ("amex 3782 822463 10005 on file", False),
        ("job 41111111-1111-1111 (a UUID cut short)", True),
        ("blob deadbeef4111111111111111cafe", True),
        ("order ref X4111111111111111Y", True),
    ],
)
def test_card_numbers_only_where_they_can_be(text: str, kept: bool) -> None:
    assert (redact(text).text == text) is kept


async def exported(settings: Settings, tmp_path: Path) -> list[dict[str, Any]]:
    file = tmp_path / "export.jsonl"
    await export_file(settings, file)
    return [json.loads(line) for line in file.read_text(encoding="utf-8").splitlines()[1:]]


async def test_luhn_passing_uuids_are_stored_intact_as_ids_and_in_text(
    server: MCPServer[Any], settings: Settings, tmp_path: Path
) -> None:
    messages = [
        {"role": "user" if i % 2 else "assistant", "id": u, "content": f"Request {u} failed; retry {u}."}
        for i, u in enumerate(UUIDS)
    ]
    async with Client(server) as client:
        result = await call(client, "remember_thread", thread_id=UUIDS[0], messages=messages)
        again = await call(client, "remember_thread", thread_id=UUIDS[0], messages=messages)
        hits = await call(client, "recall_memory", query=f"Request {UUIDS[7]} failed", limit=5)
    assert (result["stored"], result["redacted"], result["ids_replaced"]) == (40, 0, 0)
    assert (again["stored"], again["unchanged"]) == (0, 40)
    assert hits["results"][0]["message_id"] == UUIDS[7]
    memories = [e for e in await exported(settings, tmp_path) if e.get(ITEM_KEY) == "memory"]
    assert sorted((m["message_id"], m["text"], m["thread_id"]) for m in memories) == sorted(
        (u, f"Request {u} failed; retry {u}.", UUIDS[0]) for u in UUIDS
    )


async def test_an_id_holding_a_secret_is_replaced_and_the_rest_of_the_thread_is_stored(
    server: MCPServer[Any], settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    reseed(2811)
    rng = random.Random(5)
    secret = f"ghp_{''.join(rng.choice('ABCDEFGHJKabcdefghjk0123456789') for _ in range(36))}"
    card = luhn_complete("4", 16)
    messages = [{"role": "user", "id": f"m{i}", "content": f"Step {i} of the migration."} for i in range(120)]
    messages[104]["id"] = f"entry/{secret}"
    messages[60]["id"] = f"order {card}"
    messages[30]["content"] = "broken \x00 line"  # no store keeps a NUL: this one message is skipped
    async with Client(server) as client:
        first = await call(client, "remember_thread", thread_id=f"deploy {secret}", messages=messages)
        again = await call(client, "remember_thread", thread_id=f"deploy {secret}", messages=messages)
        threads = await call(client, "list_threads")
    assert (first["stored"], first["skipped_messages"], first["ids_replaced"]) == (119, 1, 3)
    assert first["skipped_reasons"] == {"unstorable": 1}
    assert (again["stored"], again["unchanged"]) == (0, 119)
    (thread,) = threads["threads"]
    assert thread["thread_id"].startswith("deploy [REDACTED:github_token]~")
    memories = [e for e in await exported(settings, tmp_path) if e.get(ITEM_KEY) == "memory"]
    ids = {m["message_id"] for m in memories}
    assert {f"m{i}" for i in range(120)} - ids == {"m30", "m60", "m104"}
    replaced = sorted(i for i in ids if not re.fullmatch(r"m\d+", i))
    assert [re.sub(r"~[0-9a-f]{24}$", "~", i) for i in replaced] == [
        "entry/[REDACTED:github_token]~",
        "order [REDACTED:card_number]~",
    ]
    files = [p for p in settings.data_dir.rglob("*") if p.is_file()]
    assert "Step 119 of the migration" in "".join(m["text"] for m in memories)
    holding = {str(p) for p in files for s in (secret, card) if s.encode() in p.read_bytes()}
    assert holding == set()
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert secret not in logged
    assert card not in logged


async def test_a_thread_stored_under_a_derived_id_is_found_and_forgotten_by_the_id_given(
    server: MCPServer[Any],
) -> None:
    secret = "glpat-" + "".join(random.Random(9).choice("ABCDEFGHJKabcdefghjk0123456789") for _ in range(20))
    thread_id = f"deploy {secret}"
    messages = [{"role": "user", "content": "The blue-green switch happens at noon."}]
    async with Client(server) as client:
        stored = await call(client, "remember_thread", thread_id=thread_id, messages=messages)
        hits = await call(client, "recall_memory", query="blue-green switch", thread_id=thread_id)
        context = await call(client, "get_memory_context", query="switch", thread_id=thread_id)
        forgotten = await call(client, "forget", thread_id=thread_id)
        left = await call(client, "list_threads")
    assert stored["thread_id"] != thread_id
    assert [h["thread_id"] for h in hits["results"]] == [stored["thread_id"]]
    assert secret not in json.dumps([stored, hits, context, forgotten])
    assert "blue-green switch" in json.dumps(context)
    assert forgotten["deleted_memories"] == 1
    assert left["threads"] == []
