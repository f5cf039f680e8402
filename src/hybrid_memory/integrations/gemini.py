"""A line of a Gemini CLI session file (``~/.gemini/tmp/<project>/chats/session-*.jsonl``), which its
hooks name as ``transcript_path``.

Gemini CLI runs the same ``hybrid-memory hook <event>`` commands as Claude Code (its payloads
carry ``session_id``, ``transcript_path``, ``cwd`` and, before a prompt, ``prompt``); only its
session file is its own. Its lines: the session's metadata (``sessionId``, ``projectHash``),
messages (``id``, ``type`` ``user`` or ``gemini``, ``content`` a string or a list of parts,
``toolCalls``), updates of the metadata (``$set``) and rewinds (``$rewindTo``). A message
written again under its id (its token counts or tool calls added) is one message. Kept:
the user's and the model's words, without what hooks added (``<hook_context>``), and the
files the model's tool calls edited or wrote. Info, error and warning lines are skipped.

Stdlib only: the Stop hook imports it.
"""

from __future__ import annotations

from typing import Any

from hybrid_memory.integrations.reading import Pass, clean, relative

_ROLES = {"user": "user", "gemini": "assistant"}
_NOTICES = ("info", "error", "warning")
_EDIT_TOOLS = {"replace", "write_file", "edit", "write"}


def is_line(line: dict[str, Any]) -> bool:
    """Whether a transcript line has Gemini CLI's shape (none of Claude Code's has it)."""
    if "uuid" in line or "message" in line:
        return False
    if "$set" in line or "$rewindTo" in line or ("sessionId" in line and "projectHash" in line):
        return True
    return isinstance(line.get("id"), str) and line.get("type") in (*_ROLES, *_NOTICES)


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    if isinstance(content, dict):
        content = [content]
    if not isinstance(content, list):
        return []
    return [p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]


def entry(state: Pass, line: dict[str, Any]) -> None:
    """Read one line: the session's id, or a user or model message."""
    if "sessionId" in line and "projectHash" in line:
        state.saw(None, line.get("sessionId"))
        state.skip("session metadata")
        return
    kind = line.get("type")
    if kind not in _ROLES:
        state.skip("metadata update" if "$set" in line or "$rewindTo" in line else str(kind))
        return
    lines = [t for t in (clean(t) for t in _texts(line.get("content"))) if t]
    if kind == "gemini":
        lines.extend(_edits(state, line.get("toolCalls")))
    if not lines:
        state.skip("no text")
        return
    message_id = str(line["id"])
    for earlier in state.reading.messages:
        if earlier.id == message_id:  # written again: its latest form holds the most
            if len("\n".join(lines)) > len(earlier.text):
                earlier.text = "\n".join(lines)
            state.skip("rewritten message")
            return
    state.add(message_id, _ROLES[str(kind)], lines, line.get("timestamp"))


def _edits(state: Pass, calls: Any) -> list[str]:
    lines: list[str] = []
    for call in calls if isinstance(calls, list) else []:
        if not isinstance(call, dict) or call.get("name") not in _EDIT_TOOLS:
            continue
        args: dict[str, Any] = call["args"] if isinstance(call.get("args"), dict) else {}
        path = args.get("file_path") or args.get("absolute_path") or args.get("path")
        if isinstance(path, str) and call.get("status") in (None, "success"):
            lines.append(f"(edited {relative(path, state.reading.cwd)})")
            state.edited.append(path)
    return lines
