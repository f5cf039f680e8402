"""What users trust us with: secrets never stored, private items never exported, errors short and clean."""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from hybrid_memory.settings import Settings
from hybrid_memory.transfer import export_file
from tests.tools.helpers import call, call_error, snapshot
from tests.unit.secret_corpus import SECRETS

# Kinds that used to slip through (registry, container-registry and bot tokens, a service-account
# key, passwords in a command line or a sentence), and the classics.
SAMPLE_KINDS = [
    *("stripe", "url", "azure_storage", "npm", "huggingface", "sendgrid", "gitlab", "twilio", "mailchimp"),
    *("card", "dockerhub", "quay_robot", "rubygems", "telegram", "slack_app", "gcp_sa_b64", "prose"),
    *("openai", "github", "aws", "jwt", "pem", "slack_bot", "gcp_api", "bearer", "env", "json", "maven"),
    *("nuget", "discord", "acr", "netrc", "mysql_flag", "azure_client_secret"),
]
SAMPLE = [next((text, secret) for kind, text, secret in SECRETS if kind == k) for k in SAMPLE_KINDS]
TAG_SECRETS = [
    s
    for _, s in SAMPLE
    if len(s) <= 64 and s.startswith(("sk_", "npm_", "hf_", "glpat-", "ghp_", "dckr_pat_", "rubygems_"))
]


CANARY = "zebracanary"


def texts_of(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def leaked(haystack: str | bytes) -> list[str]:
    """The sample secrets found in ``haystack``."""
    if isinstance(haystack, bytes):
        return [s for _, s in SAMPLE if s.encode() in haystack]
    return [s for _, s in SAMPLE if s in haystack]


async def test_secrets_never_come_back_and_never_reach_the_disk(
    server: MCPServer[Any], settings: Settings, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    half = len(SAMPLE) // 2
    async with Client(server) as client:
        stored = await call(
            client,
            "remember_thread",
            thread_id="setup",
            messages=[{"role": "user", "content": f"Here you go: {text}"} for text, _ in SAMPLE[:half]],
        )
        assert stored["redacted"] == half
        for text, _ in SAMPLE[half:]:
            await call(client, "create_note", content=f"Credentials: {text}", type="fact", force=True)
        note = await call(
            client, "create_note", content=f"Deploy keys live here, {CANARY}.", type="fact", tags=TAG_SECRETS
        )
        assert len(note["tags"]) == len(TAG_SECRETS)
        assert all(tag.startswith("[REDACTED:") for tag in note["tags"])
        await call(
            client,
            "record_task",
            description=f"Rotate the key {SAMPLE[0][0]}",
            outcome=f"Done; the new one is {SAMPLE[1][0]}",
            success=True,
            tags=TAG_SECRETS[:2],
        )
        # Asked for by their context: a query holding the secret itself would be echoed back.
        queries = [text.replace(secret, " ") for text, secret in SAMPLE]
        seen = [await call(client, "recall_memory", query=q, limit=50) for q in queries]
        seen.append(
            await call(client, "get_memory_context", query="credentials keys tokens", max_tokens=4000)
        )
        seen.append(await snapshot(client))
    assert leaked(texts_of(seen)) == []

    exported = tmp_path / "export.jsonl"
    await export_file(settings, exported)
    assert leaked(exported.read_text(encoding="utf-8")) == []
    files = [p for p in settings.data_dir.rglob("*") if p.is_file()]
    # The stores keep text as plain bytes, so the search below can see a secret if one is stored.
    holding = [p for p in files if CANARY.encode() in p.read_bytes()]
    where = {"graph" if p.name.startswith("graph.sqlite") else p.parent.name for p in holding}
    assert {"graph", "wal", "payload_storage"} <= where
    assert {str(p): leaked(p.read_bytes()) for p in files} == {str(p): [] for p in files}
    assert leaked("\n".join(r.getMessage() for r in caplog.records)) == []


async def test_tags_are_redacted_and_ids_holding_a_secret_are_replaced(server: MCPServer[Any]) -> None:
    token = next(s for k, _, s in SECRETS if k == "github")
    async with Client(server) as client:
        note = await call(client, "create_note", content="CI setup", type="fact", tags=["ci", token])
        assert note["tags"] == ["[REDACTED:github_token]", "ci"]
        thread = await call(
            client,
            "remember_thread",
            thread_id=f"deploy {token}",
            messages=[{"role": "user", "content": "hi", "id": token}],
        )
        listed = await call(client, "list_threads")
    assert (thread["stored"], thread["ids_replaced"]) == (1, 2)
    assert thread["thread_id"].startswith("deploy [REDACTED:github_token]~")
    assert [t["thread_id"] for t in listed["threads"]] == [thread["thread_id"]]
    assert token not in json.dumps([thread, listed])


async def test_private_notes_messages_and_tasks_are_marked_and_never_exported(
    server: MCPServer[Any], settings: Settings, tmp_path: Path
) -> None:
    async with Client(server) as client:
        for thread_id, private, text in (
            ("diary", True, "My therapist appointment is on Tuesday."),
            ("work", False, "The release is on Friday."),
        ):
            messages = [{"role": "user", "content": text}]
            await call(client, "remember_thread", thread_id=thread_id, messages=messages, private=private)
        hidden = await call(
            client, "create_note", content="The user is allergic to penicillin.", type="fact", private=True
        )
        shown = await call(client, "create_note", content="The user prefers dark mode.", type="preference")
        await call(client, "create_link", from_id=shown["id"], to_id=hidden["id"], relation="relates_to")
        await call(
            client,
            "record_task",
            description="Book the clinic visit",
            outcome="Booked",
            success=True,
            private=True,
        )
        assert hidden["private"] is True
        query = "therapist penicillin clinic release dark mode"
        hits = (await call(client, "recall_memory", query=query, limit=20))["results"]
        context = await call(client, "get_memory_context", query=query, max_tokens=2000)
    words = ("therapist", "penicillin", "clinic", "release", "dark mode")
    marked = {w: [h["private"] for h in hits if w in h["text"]] for w in words}
    assert marked == {
        "therapist": [True],
        "penicillin": [True],
        "clinic": [True],
        "release": [False],
        "dark mode": [False],
    }
    items = context["notes"] + context["recalled"]
    in_context = {w: [i["private"] for i in items if w in i["text"]] for w in words}
    assert in_context == marked

    file = tmp_path / "export.jsonl"
    result = await export_file(settings, file)
    body = file.read_text(encoding="utf-8")
    for private_text in ("therapist", "penicillin", "clinic"):
        assert private_text not in body
    assert "dark mode" in body
    assert "release is on Friday" in body
    # the note, its searchable copy, its link, the message and the task
    assert result.skipped_private == 5
    assert result.counts == {"memory": 2, "note": 1, "link": 0}
    assert json.loads(body.splitlines()[0])["counts"]["private_skipped"] == 5


HUGE_ID = "n" * 100_001


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        (
            "remember_thread",
            {"thread_id": "t", "messages": [{"text": "no role"}] * 10_000},
            "Error executing tool remember_thread: 10,000 argument problems: "
            "messages.0.role: Field required; messages.1.role: Field required; "
            "messages.2.role: Field required (and 9,997 more). "
            "Fix them and call again; the tool's input schema describes every argument.",
        ),
        (
            "get_linked_notes",
            {"note_id": HUGE_ID},
            "Error executing tool get_linked_notes: No note 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn… "
            "(100,001 characters)' in this project. create_note returns note ids; "
            "recall_memory(kinds=['note']) finds existing ones.",
        ),
        (
            "remember_thread",
            {"thread_id": "t", "messages": [{"role": "user", "content": "one\x00two"}]},
            "Error executing tool remember_thread: messages[0].content contains a NUL character at "
            "position 3; remove it and call again.",
        ),
        (
            "create_note",
            {"content": "caf\ud800e", "type": "fact"},
            "Error executing tool create_note: content contains a lone surrogate; text and ids may not "
            "contain NUL characters or lone surrogates, remove it and call again.",
        ),
        (
            "record_task",
            {"description": "x", "outcome": "y", "success": True, "tags": ["ok", "b\udfffad"]},
            "Error executing tool record_task: tags[1] contains a lone surrogate; text and ids may not "
            "contain NUL characters or lone surrogates, remove it and call again.",
        ),
    ],
    ids=["10k-list", "100k-id", "nul-content", "surrogate-content", "surrogate-tag"],
)
async def test_errors_are_short_and_unstorable_text_is_refused(
    server: MCPServer[Any], tool: str, arguments: dict[str, Any], expected: str
) -> None:
    async with Client(server) as client:
        error = await call_error(client, tool, **arguments)
        assert error == expected
        assert len(error) <= 800
        assert (await call(client, "list_threads"))["threads"] == []
