"""Gemini CLI's session files and the messages opencode's plugin keeps, read by the capture's reader.

The lines have the shapes Gemini CLI 0.61 and opencode 1.18 write (taken from sessions of
the real CLIs against a stand-in model, then edited by hand for the cases)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hybrid_memory.integrations.opencode import keep_messages
from hybrid_memory.integrations.transcript import parse_lines, read_from

SESSION = "766cdd54-3f5c-48ea-baf5-8f0ece9f8f67"
GEMINI = [
    {"sessionId": SESSION, "projectHash": "7731", "startTime": "2026-11-28T06:30:03.690Z", "kind": "main"},
    {"$set": {"messages": [{"id": "d049", "type": "user", "content": [{"text": "<session_context>…"}]}]}},
    {
        "id": "560e",
        "timestamp": "2026-11-28T06:30:06.682Z",
        "type": "user",
        "content": [
            {"text": "<hook_context>Long-term memory of this project …</hook_context>\n\nShip the fix"}
        ],
    },
    {"$set": {"lastUpdated": "2026-11-28T06:30:06.682Z"}},
    {"id": "13f9", "timestamp": "2026-11-28T06:30:07.466Z", "type": "gemini", "content": "Fixing it now."},
    {
        "id": "13f9",
        "timestamp": "2026-11-28T06:30:07.466Z",
        "type": "gemini",
        "content": "Fixing it now.",
        "tokens": {"input": 10},
        "toolCalls": [
            {"id": "c1", "name": "replace", "args": {"file_path": "/w/shop/app.py"}, "status": "success"}
        ],
    },
    {"id": "e1", "timestamp": "2026-11-28T06:30:08.000Z", "type": "info", "content": "Request cancelled."},
    {"$rewindTo": "13f9"},
]


def _lines(records: list[dict[str, Any]]) -> list[bytes]:
    return [json.dumps(r).encode() for r in records]


def test_a_gemini_session_gives_its_words_once_without_what_hooks_added() -> None:
    reading = parse_lines(_lines(GEMINI))

    assert reading.session_id == SESSION
    assert [(m.id, m.role, m.text) for m in reading.messages] == [
        ("560e", "user", "Ship the fix"),
        ("13f9", "assistant", "Fixing it now.\n(edited /w/shop/app.py)"),
    ]
    assert reading.skipped == {
        "session metadata": 1,
        "metadata update": 3,
        "rewritten message": 1,
        "info": 1,
    }


def _opencode(message_id: str, role: str, parts: list[dict[str, Any]], **info: Any) -> dict[str, Any]:
    time = {"created": 1795847490778, **({"completed": 1795847523486} if role == "assistant" else {})}
    return {
        "info": {"id": message_id, "sessionID": "ses_1", "role": role, "time": time, **info},
        "parts": parts,
    }


A_PY = "/w/a.py"
STAMP = "2026-11-28T06:31:30.778Z"
OPENCODE = [
    _opencode(
        "msg_1",
        "user",
        [
            {"type": "text", "text": "Run the tests"},
            {"type": "text", "text": "Called the Read tool with …", "synthetic": True},
        ],
    ),
    _opencode(
        "msg_2",
        "assistant",
        [
            {"type": "step-start"},
            {"type": "text", "text": "They pass."},
            {
                "type": "tool",
                "tool": "edit",
                "state": {"status": "completed", "input": {"filePath": "/w/a.py"}},
            },
            {
                "type": "tool",
                "tool": "bash",
                "state": {"status": "completed", "input": {"command": "pytest -q"}, "metadata": {"exit": 0}},
            },
        ],
        path={"cwd": "/w", "root": "/w"},
    ),
]


def test_opencode_messages_are_kept_once_and_read_with_their_edits_and_tests(tmp_path: Path) -> None:
    unfinished = _opencode("msg_3", "assistant", [{"type": "text", "text": "Work"}])
    del unfinished["info"]["time"]["completed"]
    keep_messages(tmp_path, "ses_1", [OPENCODE[0]])
    path = keep_messages(tmp_path, "ses_1", [*OPENCODE, unfinished])
    reading = read_from(path, 0)

    assert len(path.read_text().splitlines()) == 2
    assert reading.cwd == "/w"
    assert reading.session_id == "ses_1"
    assert [(m.id, m.role, m.text, m.created_at) for m in reading.messages] == [
        ("msg_1", "user", "Run the tests", "2026-11-28T06:31:30.778Z"),
        (
            "msg_2",
            "assistant",
            "They pass.\n(edited a.py)\n(tests passed: pytest -q)",
            "2026-11-28T06:31:30.778Z",
        ),
    ]
