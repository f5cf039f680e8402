"""The command call on the host's socket: one JSON-RPC request, stderr notifications, one answer.

A command connects to ``serve.sock`` like a joining server, but instead of an MCP
session it sends a single request with :data:`METHOD`: the command's name, its scope
and its arguments. The host runs the command's body on its open stores, relays what the
body writes to stderr as :data:`STDERR` notifications while it runs, and answers with
what to print and the exit code, or with an error whose ``data.exit`` is the exit code.
Kept free of ``mcp`` and of the stores: the joining side imports only this.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

METHOD = "hybrid-memory/command"
STDERR = "hybrid-memory/stderr"
COMMAND_ERROR = -32000


@dataclass(frozen=True)
class Reply:
    stdout: str
    """What the command prints on stdout, exactly (newlines included)."""
    code: int = 0


def line(message: dict[str, Any]) -> bytes:
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def request(command: str, scope: dict[str, str | None], args: dict[str, Any], *, tty: bool) -> bytes:
    params = {"command": command, "scope": scope, "args": args, "tty": tty}
    return line({"jsonrpc": "2.0", "id": 1, "method": METHOD, "params": params})


def is_request(first_line: bytes) -> bool:
    """Whether a connection's first line is a command call rather than an MCP client's ``initialize``."""
    if METHOD.encode() not in first_line:
        return False
    try:
        message = json.loads(first_line)
    except ValueError:
        return False
    return isinstance(message, dict) and message.get("method") == METHOD


def stderr_note(text: str) -> bytes:
    return line({"jsonrpc": "2.0", "method": STDERR, "params": {"text": text}})


def answer(reply: Reply) -> bytes:
    return line({"jsonrpc": "2.0", "id": 1, "result": {"stdout": reply.stdout, "code": reply.code}})


def failure(code: int, message: str) -> bytes:
    error = {"code": COMMAND_ERROR, "message": message, "data": {"exit": code}}
    return line({"jsonrpc": "2.0", "id": 1, "error": error})
