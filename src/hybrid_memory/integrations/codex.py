"""A line of a Codex CLI session file (``~/.codex/sessions/**/rollout-*.jsonl``), which its hooks
name as ``transcript_path`` too.

Kept: the user's and the assistant's messages (``response_item`` of type ``message``),
without developer instructions, AGENTS.md, environment blocks or reasoning. A message's
id is the one Codex wrote (recent versions), else derived from its time, role and
content: the same on every read. ``event_msg`` lines repeat what ``response_item`` lines
hold (the user's and the agent's messages) and are skipped. Of tool activity, as for
Claude Code: the files a patch edited (``apply_patch`` as a function, a custom tool, or a
shell command) and whether a test command passed or failed (the shell tool under any of
its names).

Stdlib only: the Stop hook imports it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from hybrid_memory.integrations.claude import TEST_COMMAND
from hybrid_memory.integrations.reading import Pass, clean, derived_id, relative

CODEX_TEXT = ("input_text", "output_text")
_SHELL_TOOLS = {"shell", "shell_command", "exec_command", "exec", "container.exec", "local_shell"}
_PATCHED = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+?)\s*$", re.MULTILINE)
_WRAPPER = re.compile(r"^(?:/\S*/)?(?:ba|z)?sh -l?c ")
_EXIT = re.compile(r"(?:Exit code:|exited with code|exit_code\W+)\s*(-?\d+)", re.IGNORECASE)


def entry(state: Pass, line: dict[str, Any]) -> None:
    """Read one rollout line: a user or assistant message, tool activity, or the session's facts."""
    kind, payload = line["type"], line.get("payload")
    if not isinstance(payload, dict):
        state.skip("malformed")
        return
    if kind == "session_meta":
        state.saw(payload.get("cwd"), payload.get("id") or payload.get("session_id"))
    elif kind == "turn_context":
        state.saw(payload.get("cwd"))
    if kind != "response_item":
        state.skip(kind)
        return
    item = payload.get("type")
    stamp = line.get("timestamp")
    if item == "message":
        _message(state, payload, stamp)
    elif item in ("function_call", "custom_tool_call", "local_shell_call"):
        _call(state, payload, stamp)
    elif item in ("function_call_output", "custom_tool_call_output"):
        _output(state, payload, stamp)
    else:  # reasoning, web searches, ghost snapshots, compaction
        state.skip(str(item))


def _message(state: Pass, payload: dict[str, Any], stamp: Any) -> None:
    role, content = payload.get("role"), payload.get("content")
    if role not in ("user", "assistant"):
        state.skip(f"{role} message")
        return
    blocks = content if isinstance(content, list) else [{"type": "input_text", "text": content}]
    texts = [
        b["text"]
        for b in blocks
        if isinstance(b, dict) and b.get("type") in CODEX_TEXT and isinstance(b.get("text"), str)
    ]
    lines = [t for t in (clean(t) for t in texts) if t]
    if not lines:
        state.skip("scaffolding")
        return
    given = payload.get("id")  # written by recent versions only
    message_id = given if isinstance(given, str) and given else None
    message_id = message_id or derived_id(str(stamp), str(role), json.dumps(content, sort_keys=True))
    state.add(message_id, str(role), lines, stamp)


def _arguments(payload: dict[str, Any]) -> dict[str, Any]:
    if payload.get("type") == "local_shell_call":
        action = payload.get("action")
        return action if isinstance(action, dict) else {}
    raw = payload.get("arguments", payload.get("input"))
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        parsed = None
    if isinstance(parsed, dict):
        return parsed
    return {"input": raw} if isinstance(raw, str) else {}  # a custom tool's input is its raw text


def _command(args: dict[str, Any]) -> str:
    command = args.get("command", args.get("cmd"))
    if isinstance(command, list):
        return " ".join(str(c) for c in command)
    return command if isinstance(command, str) else ""


def _call(state: Pass, payload: dict[str, Any], stamp: Any) -> None:
    name, args = payload.get("name", "local_shell"), _arguments(payload)
    call_id = str(payload.get("call_id") or payload.get("id") or "")
    if name == "apply_patch":
        patch = args.get("input") or args.get("patch") or ""
    elif name in _SHELL_TOOLS:
        patch = command = _command(args)
        if "*** Begin Patch" not in command and TEST_COMMAND.search(command):
            # A wrapped command (bash -lc "…") is shown without the wrapper.
            state.tests[call_id] = _WRAPPER.sub("", " ".join(command.split()))[:120]
    else:
        patch = ""
    paths = _PATCHED.findall(patch) if isinstance(patch, str) else []
    if not paths:
        state.skip(str(payload.get("type")))
        return
    uses = [{"verb": "edited", "path": relative(p, state.reading.cwd)} for p in dict.fromkeys(paths)]
    state.edited.extend(dict.fromkeys(paths))
    state.add(derived_id(str(stamp), "call", call_id), "assistant", [], stamp, uses=uses)


def _exit_code(output: Any) -> int | None:
    if isinstance(output, dict):
        output = output.get("content", output.get("output", ""))
    if isinstance(output, list):
        output = " ".join(str(b.get("text", "")) for b in output if isinstance(b, dict))
    if not isinstance(output, str):
        return None
    try:
        parsed = json.loads(output)
    except ValueError:
        parsed = None
    if isinstance(parsed, dict) and isinstance(parsed.get("metadata"), dict):
        code = parsed["metadata"].get("exit_code")
        return code if isinstance(code, int) else None
    found = _EXIT.search(output[:2000])
    return int(found.group(1)) if found else None


def _output(state: Pass, payload: dict[str, Any], stamp: Any) -> None:
    call_id = str(payload.get("call_id") or "")
    command = state.tests.pop(call_id, None)
    code = _exit_code(payload.get("output")) if command is not None else None
    if command is None or code is None:
        state.skip(str(payload.get("type")))
        return
    outcome = "passed" if code == 0 else "failed"
    use = {"verb": "tests", "command": command, "outcome": outcome}
    state.add(derived_id(str(stamp), "output", call_id), "assistant", [], stamp, uses=[use])
