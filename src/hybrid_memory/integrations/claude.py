"""A line of a Claude Code session transcript (``~/.claude/projects/<dir>/<session>.jsonl``).

Kept: the user's and the assistant's own words. An assistant turn written one content
block per line (thinking, text, tool calls, all with the same ``message.id``) is one
message, its id the uuid of the turn's first line with text. Of tool activity a few things
become a short line, because a later session asks about them and they cost a few tokens:
which files were edited, written or read, whether a test command passed or failed, and how
any other command that changes or checks something ended (with the error's signature when
it failed). The service reads these lines back as the session's entities (files, commands,
errors).

Skipped and counted: lines that are no message (``summary``, ``file-history-snapshot``,
``queue-operation``, ``progress``, ``attachment``, ``system``, titles, modes, links…),
meta entries, compaction summaries (scaffolding for the model, the turns they summarise
are stored already), API error notices and sub-agent turns (``isSidechain``). A
sub-agent's turns are the parent session's tool work: its prompt is the parent's, its
answer comes back to the parent as a tool result the parent then speaks of, and its
searches and reads are the noise a memory should not hold.

Stdlib only: the Stop hook imports it.
"""

from __future__ import annotations

import re
from typing import Any

from hybrid_memory.integrations.reading import CONTINUATION, Pass, clean, derived_id, relative

_EDIT_TOOLS = {"Edit", "Write", "MultiEdit", "NotebookEdit"}
TEST_COMMAND = re.compile(
    r"\b(pytest|tox|nox|jest|vitest|mocha|go test|cargo test|npm (run )?test|make test)\b"
)
_QUIET = "ls cd cat echo pwd head tail grep rg find sed awk wc which true false sleep mkdir touch printf"
_QUIET_COMMANDS = frozenset([*_QUIET.split(), "tree", "file", "stat", "less", "diff", "sort", "env", "date"])
"""Commands that only look around: not worth a line."""
_ERROR_SIGNATURE = re.compile(
    r"^\s*((?:[\w.]+(?:Error|Exception|Failure)|error(?:\[\w+\])?|fatal|FAILED|panic)\b[:!]?.{0,100})",
    re.MULTILINE,
)
_COMMAND_CHARS = 120


def _program(command: str) -> str:
    """The command's program, past ``cd … &&``, ``sudo`` and variable assignments."""
    for part in re.split(r"&&|;|\|\|", command):
        words = [w for w in part.split() if "=" not in w.split("/")[0] and w != "sudo"]
        if words and words[0] != "cd":
            return words[0].rsplit("/", 1)[-1]
    return ""


def error_signature(output: str) -> str | None:
    """The last line of a failed command's output that names its error (``KeyError: 'user'``)."""
    found = _ERROR_SIGNATURE.findall(output[-20_000:])
    return " ".join(found[-1].split())[:120] if found else None


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    return content if isinstance(content, str) else "\n".join(texts(content))


def texts(content: Any) -> list[str]:
    """The text blocks of a message's content: a string, or a list of blocks."""
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [
        b["text"]
        for b in content
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]


def _skip_reason(entry: dict[str, Any]) -> str | None:
    if entry.get("isSidechain"):
        return "sidechain"
    if entry.get("isCompactSummary") or entry.get("isVisibleInTranscriptOnly"):
        return "compaction summary"
    if entry.get("isMeta"):
        return "meta"
    if entry.get("isApiErrorMessage"):
        return "api error"
    if not isinstance(entry.get("message"), dict) or not isinstance(entry.get("uuid"), str):
        return "malformed"
    return None


def entry(state: Pass, line: dict[str, Any]) -> None:
    """Read one Claude Code line: a user or assistant entry becomes (part of) a message."""
    kind = line.get("type")
    if kind not in ("user", "assistant"):
        state.skip(str(kind) if isinstance(kind, str) else "no type")
        return
    reason = _skip_reason(line)
    if reason is not None:
        state.skip(reason)
        return
    message: dict[str, Any] = line["message"]
    cwd = line.get("cwd") if isinstance(line.get("cwd"), str) else None
    state.saw(cwd, line.get("sessionId"))
    content = message.get("content")
    lines = [t for t in (clean(t) for t in texts(content)) if t]
    turn = message.get("id") if kind == "assistant" and isinstance(message.get("id"), str) else None
    if kind == "assistant":
        uses = _tool_uses(state, content, cwd)
    else:
        if any(t.lstrip().startswith(CONTINUATION) for t in texts(content)):
            state.skip("compaction summary")
            return
        uses = _tool_results(state, content)
        if lines and uses:  # the user's words beside tool results: each stays whose it is
            state.add(line["uuid"], "user", lines, line.get("timestamp"))
            state.add(derived_id(line["uuid"], "tools"), "assistant", [], line.get("timestamp"), uses=uses)
            return
    if not lines and not uses:
        state.skip("no text" if kind == "assistant" or _is_tool_result(content) else "scaffolding")
        return
    role = "user" if kind == "user" and not _is_tool_result(content) else "assistant"
    # The turn's first line read with text names it: the same on every read from the same offset, and a
    # turn caught half-written (a capture while it streams) keeps its first half under its own id.
    state.add(line["uuid"], role, lines, line.get("timestamp"), turn, uses)


def _tool_uses(state: Pass, content: Any, cwd: str | None) -> list[dict[str, str]]:
    lines: list[dict[str, str]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict) or block.get("type") != "tool_use":
            continue
        given = block.get("input")
        args: dict[str, Any] = given if isinstance(given, dict) else {}
        name = block.get("name")
        path = args.get("file_path") or args.get("notebook_path")
        if name in _EDIT_TOOLS and isinstance(path, str):
            lines.append({"verb": "edited", "path": relative(path, cwd)})
            state.edited.append(path)
            state.edits[str(block.get("id"))] = relative(path, cwd)
        elif name == "Read" and isinstance(path, str):
            lines.append({"verb": "read", "path": relative(path, cwd)})
        command = args.get("command")
        if name == "Bash" and isinstance(command, str):
            flat = " ".join(command.split())[:_COMMAND_CHARS]
            if TEST_COMMAND.search(command):
                state.tests[str(block.get("id"))] = flat
            elif _program(command) not in _QUIET_COMMANDS:
                state.commands[str(block.get("id"))] = flat
    return lines


def _tool_results(state: Pass, content: Any) -> list[dict[str, str]]:
    lines: list[dict[str, str]] = []
    for block in content if isinstance(content, list) else []:
        if not isinstance(block, dict) or block.get("type") != "tool_result":
            continue
        use_id = str(block.get("tool_use_id"))
        edited = state.edits.pop(use_id, None)
        if edited is not None and block.get("is_error"):
            # Refused, interrupted or failed: the edit announced with its call did not happen.
            lines.append({"verb": "not edited", "path": edited})
        command = state.tests.pop(use_id, None)
        if command is not None:
            outcome = "failed" if block.get("is_error") else "passed"
            lines.append({"verb": "tests", "command": command, "outcome": outcome})
        command = state.commands.pop(use_id, None)
        if command is not None:
            ran = {"verb": "ran", "command": command, "outcome": "failed" if block.get("is_error") else "ok"}
            signature = error_signature(_result_text(block)) if block.get("is_error") else None
            lines.append({**ran, "error": signature} if signature else ran)
    return lines


def _is_tool_result(content: Any) -> bool:
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )
