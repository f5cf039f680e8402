"""opencode: its plugin's hooks (``hybrid-memory hook opencode <event>``) and the transcript they keep.

opencode runs JavaScript plugins, not commands; the plugin ``install opencode`` writes
(``opencode_plugin.js``) calls this with Claude Code's payload fields. At ``stop`` it adds
the session's messages as opencode's API gives them (``{"info": …, "parts": […]}``): the
ones finished and not yet kept are appended to a transcript of the session in the hooks'
folder (``hooks/opencode/<session>.jsonl``), which the same capture as Claude Code's reads
(its ``transcript_path``). Other events go to the hooks as they are.

Kept of a message: its text parts (not those opencode or a plugin made up, ``synthetic``),
the files its edit and write tools changed, and whether a test command passed. Stdlib
only: the hooks import it.
"""

from __future__ import annotations

import io
import json
import sys
import time
from collections.abc import Iterable
from os import PathLike
from pathlib import Path
from typing import IO, Any

from hybrid_memory.integrations.claude import TEST_COMMAND
from hybrid_memory.integrations.reading import Pass, clean, relative

_EDIT_TOOLS = {"edit", "write", "patch", "multiedit"}


def is_line(line: dict[str, Any]) -> bool:
    return isinstance(line.get("info"), dict) and isinstance(line.get("parts"), list)


def _finished(message: Any) -> bool:
    info = message.get("info") if isinstance(message, dict) else None
    if not isinstance(info, dict) or not isinstance(info.get("id"), str):
        return False
    return info.get("role") == "user" or bool((info.get("time") or {}).get("completed"))


def keep_messages(folder: Path, session_id: str, messages: list[Any]) -> Path:
    """Append the finished messages not kept yet to the session's transcript; its path."""
    from hybrid_memory.integrations.config import safe_name

    path = folder / f"{safe_name(session_id)}.jsonl"
    kept: set[str] = set()
    if path.exists():
        for raw in path.read_bytes().splitlines():
            try:
                kept.add(json.loads(raw)["info"]["id"])
            except (ValueError, KeyError, TypeError):
                continue
    new = [m for m in messages if _finished(m) and m["info"]["id"] not in kept]
    folder.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as f:
        for message in new:
            f.write(json.dumps({"info": message["info"], "parts": message.get("parts") or []}) + "\n")
    return path


def transcripts_dir(data_dir: str | PathLike[str]) -> Path:
    """The folder of the transcripts kept for opencode's sessions, in the hooks' folder of ``data_dir``."""
    from hybrid_memory.integrations.config import hooks_dir

    return Path(hooks_dir(data_dir)) / "opencode"


def forget_transcripts(data_dir: str | PathLike[str], sessions: Iterable[str]) -> int:
    """Remove the transcripts kept for ``sessions`` (a forgotten project's); how many there were."""
    from hybrid_memory.integrations.config import safe_name

    folder, removed = transcripts_dir(data_dir), 0
    for session in sessions:
        try:
            (folder / f"{safe_name(session)}.jsonl").unlink()
        except FileNotFoundError:
            continue
        removed += 1
    return removed


def _with_transcript(raw: str) -> str:
    """The stop payload with its messages kept in a transcript, named as ``transcript_path``."""
    from hybrid_memory.integrations.config import HookConfig

    payload = json.loads(raw)
    messages = payload.pop("messages", None) if isinstance(payload, dict) else None
    if not isinstance(messages, list) or not isinstance(payload.get("session_id"), str):
        return raw
    folder = transcripts_dir(HookConfig.from_env().data_dir)
    payload["transcript_path"] = str(keep_messages(folder, payload["session_id"], messages))
    return json.dumps(payload)


def run(event: str, stdin: IO[str], stdout: IO[str], stderr: IO[str]) -> int:
    """One hook from the plugin; always 0, as every hook."""
    from hybrid_memory.integrations import hooks

    raw = stdin.read()
    if event in ("stop", "pre-compact", "session-end"):
        try:
            raw = _with_transcript(raw)
        except (OSError, ValueError) as exc:
            stderr.write(f"hybrid-memory hook opencode {event}: the messages were not kept: {exc}\n")
    return hooks.run(event, io.StringIO(raw), stdout, stderr)


def main(argv: list[str]) -> int:
    """``hybrid-memory hook opencode <event>`` (dispatched by :mod:`hybrid_memory._entry`)."""
    return run(argv[0] if argv else "", sys.stdin, sys.stdout, sys.stderr)


def _stamp(info: dict[str, Any]) -> str | None:
    created = (info.get("time") or {}).get("created")
    if not isinstance(created, int | float):
        return None
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created / 1000)) + f".{int(created % 1000):03d}Z"


def entry(state: Pass, line: dict[str, Any]) -> None:
    """Read one kept message: its words, and what its tools edited or tested."""
    info, parts = line["info"], line["parts"]
    path = info.get("path") if isinstance(info.get("path"), dict) else {}
    state.saw(path.get("cwd"), info.get("sessionID"))
    role = info.get("role")
    if role not in ("user", "assistant"):
        state.skip(f"{role} message")
        return
    lines: list[str] = []
    for part in parts:
        if not isinstance(part, dict):
            continue
        if part.get("type") == "text" and not part.get("synthetic") and not part.get("ignored"):
            text = clean(str(part.get("text") or ""))
            if text:
                lines.append(text)
        elif part.get("type") == "tool" and role == "assistant":
            lines.extend(_tool(state, part))
    if not lines:
        state.skip("no text")
        return
    state.add(str(info["id"]), str(role), lines, _stamp(info))


def _tool(state: Pass, part: dict[str, Any]) -> list[str]:
    tool_state: dict[str, Any] = part["state"] if isinstance(part.get("state"), dict) else {}
    if tool_state.get("status") != "completed":
        return []
    given = tool_state.get("input")
    args: dict[str, Any] = given if isinstance(given, dict) else {}
    name = part.get("tool")
    path = args.get("filePath") or args.get("file_path")
    if name in _EDIT_TOOLS and isinstance(path, str):
        state.edited.append(path)
        return [f"(edited {relative(path, state.reading.cwd)})"]
    command = args.get("command")
    if name == "bash" and isinstance(command, str) and TEST_COMMAND.search(command):
        metadata: dict[str, Any] = (
            tool_state["metadata"] if isinstance(tool_state.get("metadata"), dict) else {}
        )
        code = metadata.get("exit")
        if isinstance(code, int):
            outcome = "passed" if code == 0 else "failed"
            return [f"(tests {outcome}: {' '.join(command.split())[:120]})"]
    return []
