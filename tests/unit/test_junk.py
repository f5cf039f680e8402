"""Lines that are no one's words stay out of notes, digests and the session start."""

from __future__ import annotations

import pytest

from hybrid_memory.service.knowledge.capture.digest import digest
from hybrid_memory.service.knowledge.statements.cues import Said, cues
from hybrid_memory.text.junk import junk, prose


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("Read the output file to retrieve the result: /private/tmp/claude/tasks/b1.output", "notification"),
        ("<task-notification>Background command completed</task-notification>", "notification"),
        ("Unknown skill: ralph-loop", "echo"),
        ('Bash command permission check failed for pattern "rm -rf"', "echo"),
        ("⎿  Error: Agent type 'DOCGEN' not found.", "echo"),
        ("════════════════════════════════", "box drawing"),
        ("│ > build the image                │", "box drawing"),
        ("| Endpoint | Status |", "table"),
        ("|---|---|", "table"),
        ("Traceback (most recent call last):", "traceback"),
        ('  File "app.py", line 3, in <module>', "traceback"),
        ("SyntaxError: from __future__ imports must occur at the beginning of the file.", "traceback"),
        ("ubuntu@ubuntu:~/Documents/livecd-gen$ sudo ./start-production-stream.sh", "terminal"),
        ("$ npm run build", "terminal"),
        ("npm ERR! code ELIFECYCLE", "terminal"),
        ("2026-01-14 04:56:12,345 INFO worker started", "terminal"),
        ("def handler(event, context):", "code"),
        ("from __future__ import annotations", "code"),
        ("const total = items.reduce((a, b) => a + b, 0);", "code"),
        ("9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "paste"),
    ],
)
def test_what_no_one_said_is_junk(line: str, kind: str) -> None:
    assert junk(line) == kind


@pytest.mark.parametrize(
    "line",
    [
        "We use Postgres 16 for billing, not MySQL.",
        "dont use /tmp keep everything within the claude dir",
        "truncated display is simpler and better. the resolution loss here is barely noticable.",
        "pode fazer as alteraçoes e nao fique me perguntando",
        "应该依照 role.name 这样为主不是把 role 变成 roleName",
        "用 wandb 收集和可视化所有指标",
        "Fix the login bug in src/auth.py (it throws on empty passwords).",
        "Tests run with `make test`.",
        "[Image #1] why is the header misaligned on mobile?",
    ],
)
def test_what_people_say_is_not(line: str) -> None:
    assert junk(line) is None


def test_the_goal_is_the_first_real_request_whole_without_what_was_pasted_into_it() -> None:
    said = [
        Said("1", "user", "hi"),
        Said(
            "2",
            "user",
            "[Image #1] The export button does nothing on Safari, here is the console:\n"
            "TypeError: undefined is not an object (evaluating 'blob.stream')\n"
            "    at exportCsv (export.js:41:12)\n"
            "Make the CSV export work on Safari and keep the file name with the date, as it is today "
            "for Chrome and Firefox users.",
        ),
        Said("3", "assistant", "(ran codex.*sessio → ok)\n(edited web/export.js)"),
        Said("4", "assistant", "Read the output file to retrieve the result: /private/tmp/claude/b1.output"),
        Said("5", "user", "| file | status |\n|---|---|\n| export.js | ok |"),
    ]
    assert digest(said, cues(said)) == (
        "Goal: The export button does nothing on Safari, here is the console: Make the CSV export work on "
        "Safari and keep the file name with the date, as it is today for Chrome and Firefox users.\n"
        "Changed: edited web/export.js"
    )


def test_prose_keeps_a_requests_words_and_drops_the_paste_in_it() -> None:
    text = "Why does it fail?\n```\nKeyError: 'user'\n```\n$ make test\nIt worked yesterday."
    assert prose(text) == "Why does it fail?\nIt worked yesterday."


def test_a_prompt_that_only_sets_the_session_up_is_not_its_goal() -> None:
    from hybrid_memory.service.knowledge.capture.digest import goal

    assert goal(["load claude.md", "Option 1", "删除掉下载的是所有avd"]) == "删除掉下载的是所有avd"
    assert goal(["/clear", "read CLAUDE.md", "Update multi.py to take arguments from the command line"]) == (
        "Update multi.py to take arguments from the command line"
    )


@pytest.mark.parametrize(
    "line",
    [
        "UltraThink Direct ZFS Streaming - Production Startup [SUCCESS] Docker accessible without sudo",
        "APIDesigner, Architect, Bastion, Constructor, DataScience, Database, Debugger, Deployer",
    ],
)
def test_status_lines_and_pasted_lists_of_names_are_junk(line: str) -> None:
    assert junk(line) in ("terminal", "paste")


def test_a_paste_with_a_title_is_not_the_goal() -> None:
    from hybrid_memory.service.knowledge.capture.digest import goal

    pasted = "\n".join(
        [
            "UltraThink Direct ZFS Streaming - Production Startup",
            "════════════════════════════════",
            "[SUCCESS] Docker accessible without sudo",
            "[SUCCESS] Production directories ready",
            "[SUCCESS] ZFS module loaded successfully",
        ]
    )
    assert goal([pasted, "Why does the stream stop after the ZFS module loads?"]) == (
        "Why does the stream stop after the ZFS module loads?"
    )
