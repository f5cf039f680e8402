"""Every transcript shape Claude Code (1.0.80 to 2.1.x) and Codex CLI (0.34 to 0.14x) writes, read.

The fixtures in ``tests/fixtures/transcripts`` are written by hand in each version's format:
one file a version, as such a session would leave it, each line one of the shapes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from hybrid_memory.integrations.reading import relative
from hybrid_memory.integrations.transcript import Reading, parse_lines, read_from

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
CLAUDE_1_0 = FIXTURES / "claude-code" / "0b6f2c1e-7d3a-4e55-9a21-3c8f1d2e4a01.jsonl"
CLAUDE_2_1 = FIXTURES / "claude-code" / "7c2d9e40-51b8-4f0a-b6e3-2a9d0c4f8e12.jsonl"
CLAUDE_WINDOWS = FIXTURES / "claude-code" / "e4a1b2c3-9d8e-4f70-8a6b-5c4d3e2f1a00.jsonl"
SUBAGENTS = [
    FIXTURES / "claude-code" / "agent-5e1b7f30.jsonl",
    FIXTURES / "claude-code" / "7c2d9e40-51b8-4f0a-b6e3-2a9d0c4f8e12" / "subagents" / "agent-a3f9c21.jsonl",
]
CODEX_0_34 = FIXTURES / "codex" / "rollout-2025-09-12T10-00-00-5f3e2d1c-0b9a-4c8d-8e7f-6a5b4c3d2e10.jsonl"
CODEX_0_14X = FIXTURES / "codex" / "rollout-2026-10-30T16-00-00-019a7b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b.jsonl"

ATLAS_TURN = (
    "A 24-hour TTL in Redis, keyed by z/x/y: I'll set it and run the tile tests.\n(edited tiles/cache.py)"
)
SCAFFOLDING = [
    "Caveat:",  # meta entries
    "/init",  # command tags
    "Initialized CLAUDE.md",
    "[Request interrupted",  # interrupts
    "The user opened the file",  # system reminders and IDE tags
    "The user selected the lines",
    "Stop hook feedback",  # hook echoes
    "Possibly relevant memory",
    "git status",  # ! bash mode
    "On branch",
    "This session is being continued",  # continuation summaries
    "Summary of the session so far",
    "API Error",
    "Sub-agent chatter",  # sub-agent turns
    "Sidechain turn",
    "Ready to help",
    "AGENTS.md",  # Codex's instructions and environment
    "Run ruff before committing",
    "Always write type hints",
    "environment_context",
    "<cwd>",
    "permissions instructions",
    "You are Codex",
    "interrupted the previous turn",
    "Planning approval rule",  # reasoning
]


def _texts(reading: Reading) -> list[tuple[str, str]]:
    return [(m.role, m.text) for m in reading.messages]


def test_claude_code_1_0_keeps_the_words_and_joins_a_turn_written_a_block_a_line() -> None:
    reading = read_from(CLAUDE_1_0, 0)
    assert [(m.id, m.role, m.text) for m in reading.messages] == [
        (
            "1a000000-0000-4000-8000-000000000004",
            "user",
            "The ledger stores amounts as integer cents, never floats.",
        ),
        (
            "1a000000-0000-4000-8000-000000000005",
            "assistant",
            "Understood: integer cents everywhere. I'll check the money module.\n(edited ledger/money.py)",
        ),
        ("1a000000-0000-4000-8000-000000000009", "user", "Use banker's rounding for the VAT lines."),
        (
            "1a000000-0000-4000-8000-000000000010",
            "assistant",
            "Banker's rounding (ROUND_HALF_EVEN) for VAT, noted.",
        ),
    ]
    assert reading.skipped == {"summary": 1, "meta": 1, "scaffolding": 3, "no text": 1, "not JSON": 1}
    assert (reading.session_id, reading.cwd) == (
        "0b6f2c1e-7d3a-4e55-9a21-3c8f1d2e4a01",
        "/home/ada/work/ledger",
    )


def test_claude_code_2_1_skips_and_counts_every_line_that_is_no_message() -> None:
    reading = read_from(CLAUDE_2_1, 0)
    assert _texts(reading) == [
        ("user", "Tiles are cached for 24 hours in Redis, keyed by z/x/y."),
        (
            "assistant",
            ATLAS_TURN,
        ),
        ("assistant", "(tests failed: uv run pytest -q tests/tiles)"),
        ("user", "The failing test expects a 1-hour TTL for the debug layer; keep that layer at 1 hour."),
        ("assistant", "Debug layer stays at 1 hour; the others get 24 hours."),
    ]
    assert reading.messages[1].id == "2b000000-0000-4000-8000-000000000005"  # four lines, one turn
    assert reading.skipped == {
        "file-history-snapshot": 1,
        "queue-operation": 2,
        "permission-mode": 1,
        "attachment": 1,
        "progress": 2,
        "system": 2,
        "last-prompt": 1,
        "ai-title": 1,
        "custom-title": 1,
        "agent-name": 1,
        "pr-link": 1,
        "worktree-state": 1,
        "compaction summary": 2,
        "api error": 1,
        "sidechain": 1,
        "scaffolding": 4,
        "no text": 5,
        "not JSON": 2,
    }


@pytest.mark.parametrize(
    "path", [CLAUDE_1_0, CLAUDE_2_1, CLAUDE_WINDOWS, CODEX_0_34, CODEX_0_14X, *SUBAGENTS]
)
def test_no_scaffolding_reaches_a_message(path: Path) -> None:
    stored = "\n".join(m.text for m in read_from(path, 0).messages)
    assert [marker for marker in SCAFFOLDING if marker in stored] == []


@pytest.mark.parametrize("path", SUBAGENTS, ids=["beside-the-session", "subagents-dir"])
def test_a_sub_agent_transcript_gives_no_message(path: Path) -> None:
    reading = read_from(path, 0)
    assert reading.messages == []
    assert reading.skipped == {"sidechain": 2}


def test_a_turn_caught_half_written_keeps_each_half_under_its_own_id(tmp_path: Path) -> None:
    lines = CLAUDE_2_1.read_bytes().splitlines(keepends=True)
    text_block = next(i for i, line in enumerate(lines) if b"I'll set it and run" in line)
    path = tmp_path / "s.jsonl"
    path.write_bytes(b"".join(lines[: text_block + 1]))
    first = read_from(path, 0)
    assert (first.messages[-1].id, first.messages[-1].text) == (
        "2b000000-0000-4000-8000-000000000005",
        "A 24-hour TTL in Redis, keyed by z/x/y: I'll set it and run the tile tests.",
    )
    path.write_bytes(b"".join(lines))
    second = read_from(path, first.end)
    # The rest of the turn does not overwrite the half stored already.
    assert (second.messages[0].id, second.messages[0].text) == (
        "2b000000-0000-4000-8000-000000000006",
        "(edited tiles/cache.py)",
    )
    whole = read_from(path, 0)
    assert (whole.messages[1].id, whole.messages[1].text) == (
        "2b000000-0000-4000-8000-000000000005",
        ATLAS_TURN,
    )
    assert read_from(path, whole.end).messages == []


def test_a_windows_session_with_crlf_lines_gives_posix_paths() -> None:
    reading = read_from(CLAUDE_WINDOWS, 0)
    assert reading.cwd == "/c/Users/ada/work/Billing"
    assert _texts(reading) == [
        ("user", "Invoices are numbered per fiscal year: INV-2025-0001."),
        ("assistant", "Numbering restarts each fiscal year.\n(edited billing/numbers.py)"),
    ]


def test_codex_0_34_without_turn_context_stores_each_message_once() -> None:
    reading = read_from(CODEX_0_34, 0)
    assert _texts(reading) == [
        ("user", "Orders over 500 EUR need a second approver."),
        ("assistant", "(edited orders/approval.py)"),  # apply_patch run through the shell tool
        ("assistant", "(tests passed: pytest -q tests/test_approval.py)"),
        ("assistant", "Done: orders over 500 EUR now need a second approver; tests pass."),
    ]
    assert (reading.session_id, reading.cwd) == (
        "5f3e2d1c-0b9a-4c8d-8e7f-6a5b4c3d2e10",
        "/home/ada/work/orders",
    )
    assert reading.skipped == {
        "session_meta": 1,
        "scaffolding": 2,
        "event_msg": 4,  # user_message and agent_message repeat the response items
        "reasoning": 1,
        "function_call": 1,
        "function_call_output": 1,
        "not JSON": 1,
    }
    assert [m.id for m in read_from(CODEX_0_34, 0).messages] == [m.id for m in reading.messages]


def test_codex_0_14x_reads_every_tool_name_and_the_files_own_session() -> None:
    reading = read_from(CODEX_0_14X, 0)
    assert _texts(reading) == [
        ("user", "The search index is rebuilt nightly at 02:00 UTC."),
        ("assistant", "(edited search/schedule.py)"),  # apply_patch as a custom tool
        ("assistant", "(edited search/cron.py)"),  # apply_patch as a function
        ("assistant", "(tests failed: pytest -q tests/test_cron.py)"),  # shell_command
        ("assistant", "(tests passed: cargo test -p indexer)"),  # exec_command
        ("assistant", "The rebuild now runs at 02:00 UTC; one cron test still fails."),
    ]
    # Two session_meta lines (a forked session): the file's own is the one its name carries.
    assert reading.session_id == "019a7b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b"
    assert reading.skipped["session_meta"] == 2
    assert reading.skipped["developer message"] == 1
    assert reading.skipped["event_msg"] == 3
    assert reading.skipped["function_call"] == 3  # the tests' calls, and `exec` listing a directory


@pytest.mark.parametrize(
    "line",
    [
        b'{"type": "user", "uuid": 1, "message": "x"}',
        b'{"type": "assistant", "uuid": "u", "message": {"id": 3, "content": {"text": "x"}}}',
        b'{"type": "assistant", "uuid": "u", "message": {"content": [{"type": "tool_use", "input": [1]}]}}',
        b'{"type": "user", "uuid": "u", "message": {"content": [{"type": "tool_result", "tool_use_id": 1}]}}',
        b'{"type": "response_item", "payload": {"type": "message", "role": "user", "content": 5}}',
        b'{"type": "response_item", "payload": {"type": "function_call", "name": "exec", "arguments": "1"}}',
        b'{"type": "response_item", "payload": {"type": "function_call_output", "call_id": 4, "output": {}}}',
        b'{"type": "session_meta", "payload": "x"}',
        b'{"type": ["user"]}',
        b"\xff\xfe not utf-8",
        b"",
    ],
)
def test_a_line_of_an_unknown_shape_is_skipped_and_the_read_goes_on(line: bytes) -> None:
    good = json.dumps(
        {"type": "user", "uuid": "u-2", "cwd": "/w", "message": {"role": "user", "content": "Kept."}}
    ).encode()
    reading = parse_lines([line, good])
    assert _texts(reading) == [("user", "Kept.")]
    assert sum(reading.skipped.values()) == (1 if line else 0)


@pytest.mark.parametrize(
    "text",
    [
        "<ide_opened_file>The user opened the file /w/a.py in the IDE.</ide_opened_file>",
        "<ide_selection>The user selected the lines 1 to 2 from /w/a.py:\nx = 1</ide_selection>",
        "<ide_diagnostics>a.py:3 undefined name</ide_diagnostics>",
        "[Request interrupted by user]",
        "[Request interrupted by user for tool use]",
        "<command-name>/compact</command-name>\n<command-message>compact</command-message>\n<command-args></command-args>",
        "<local-command-stdout>Compacted.</local-command-stdout>",
        "<system-reminder>\nThe TodoWrite tool hasn't been used recently.\n</system-reminder>",
        "This session is being continued from a previous conversation that ran out of context. Summary: …",
        "Stop hook feedback:\n[hybrid-memory hook stop]: lint first",
        "<user-prompt-submit-hook>Remember the style guide.</user-prompt-submit-hook>",
        "Long-term memory of this project (cite as [memory:<id>]; read_memory gives more).\n\nNotes: …",
        "Possibly relevant memory from earlier sessions (cite as [memory:<id>]; …):\n- [memory:m1] …",
        "<turn_aborted>\nThe user interrupted the previous turn.\n</turn_aborted>",
        "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nUse uv.\n</INSTRUCTIONS>",
    ],
)
def test_agent_scaffolding_as_a_user_message_stores_nothing(text: str) -> None:
    line = {"type": "user", "uuid": "u-1", "cwd": "/w", "message": {"role": "user", "content": text}}
    reading = parse_lines([json.dumps(line).encode()])
    assert reading.messages == []
    assert sum(reading.skipped.values()) == 1


@pytest.mark.parametrize(
    ("call", "output"),
    [
        (
            {
                "type": "function_call",
                "name": "shell",
                "arguments": '{"command": ["/bin/zsh", "-lc", "pytest -q"]}',
            },
            '{"output": "1 failed", "metadata": {"exit_code": 1}}',
        ),
        (
            {"type": "function_call", "name": "shell_command", "arguments": '{"command": "pytest -q"}'},
            "Exit code: 1",
        ),
        (
            {"type": "function_call", "name": "exec_command", "arguments": '{"cmd": "pytest -q"}'},
            "exited with code 1",
        ),
        (
            {"type": "function_call", "name": "exec", "arguments": '{"cmd": ["pytest", "-q"]}'},
            "Exit code: 1\n",
        ),
        (
            {
                "type": "local_shell_call",
                "status": "completed",
                "action": {"type": "exec", "command": ["pytest", "-q"]},
            },
            [{"type": "input_text", "text": "Exit code: 1"}],
        ),
    ],
    ids=["shell", "shell_command", "exec_command", "exec", "local_shell_call"],
)
def test_codex_test_runs_are_read_under_every_shell_tool_name(
    call: dict[str, object], output: object
) -> None:
    lines = [
        {"timestamp": "2026-01-01T00:00:00Z", "type": "response_item", "payload": {**call, "call_id": "c1"}},
        {
            "timestamp": "2026-01-01T00:00:01Z",
            "type": "response_item",
            "payload": {"type": "function_call_output", "call_id": "c1", "output": output},
        },
    ]
    reading = parse_lines([json.dumps(line).encode() for line in lines])
    assert _texts(reading) == [("assistant", "(tests failed: pytest -q)")]


@pytest.mark.parametrize(
    ("path", "cwd", "shown"),
    [
        ("C:\\Users\\ada\\Ledger\\src\\db.py", "C:\\Users\\ada\\Ledger", "src/db.py"),
        ("c:\\users\\ada\\ledger\\src\\db.py", "C:\\Users\\ada\\Ledger", "src/db.py"),
        ("D:\\other\\db.py", "C:\\Users\\ada\\Ledger", "/d/other/db.py"),
        ("\\\\server\\share\\ledger\\db.py", "\\\\server\\share\\ledger", "db.py"),
        ("/home/ada/Ledger/src/db.py", "/home/ada/ledger", "/home/ada/Ledger/src/db.py"),
    ],
)
def test_an_edited_file_is_shown_relative_to_the_session_directory(path: str, cwd: str, shown: str) -> None:
    assert relative(path, cwd) == shown


def test_the_users_words_beside_tool_results_stay_the_users() -> None:
    use = {
        "type": "assistant",
        "uuid": "a-1",
        "cwd": "/w",
        "message": {
            "id": "msg_1",
            "content": [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "pytest -q"}}],
        },
    }
    result = {
        "type": "user",
        "uuid": "u-2",
        "cwd": "/w",
        "message": {
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "2 passed"},
                {"type": "text", "text": "Also, the staging database is read-only on Fridays."},
            ]
        },
    }
    reading = parse_lines([json.dumps(use).encode(), json.dumps(result).encode()])
    assert _texts(reading)[-2:] == [
        ("user", "Also, the staging database is read-only on Fridays."),
        ("assistant", "(tests passed: pytest -q)"),
    ]
    assert reading.messages[-2].id == "u-2"


def test_an_edit_the_user_interrupted_is_read_as_not_done() -> None:
    def entry(uuid: str, kind: str, content: object) -> bytes:
        message = {"role": kind, "content": content, **({"id": "msg_1"} if kind == "assistant" else {})}
        return json.dumps({"type": kind, "uuid": uuid, "cwd": "/w/ingest", "message": message}).encode()

    edit = {
        "type": "tool_use",
        "id": "t1",
        "name": "Edit",
        "input": {"file_path": "/w/ingest/ingest/loader.py"},
    }
    refused = {"type": "tool_result", "tool_use_id": "t1", "is_error": True}
    lines = [
        entry("a1", "assistant", [edit]),
        entry("r1", "user", [{**refused, "content": "[Request interrupted by user for tool use]"}]),
    ]
    assert [m.text for m in parse_lines(lines).messages] == [
        "(edited ingest/loader.py)",
        "(not edited ingest/loader.py)",
    ]
