"""The host's socket, as both ends speak it: framing, bounds, intervals, and the command call.

Every message is one line of JSON-RPC (newline-delimited, as on stdio). Most connections
carry an MCP session; the others carry a command call.

The command call: one JSON-RPC request, stderr notifications, one answer.

A command connects to ``serve.sock`` like a joining server, but instead of an MCP
session it sends a single request with :data:`METHOD`: the command's name, its scope
and its arguments. The host runs the command's body on its open stores, relays what the
body writes to stderr as :data:`STDERR` notifications while it runs, and answers with
what to print and the exit code, or with an error whose ``data.exit`` is the exit code.
The injection call: a hook's one request. A hook sends one :data:`INJECT` request (the
event, its session, its directory, the prompt, the hooks' limits) and the host answers with
the text to inject, the ids it cites and its tokens, or with an error of one line.
The capture call: a capture hook's one request. A hook sends one :data:`CAPTURE` request (the
session, its transcript's path, its directory) and the host reads what the transcript gained, stores
it and answers with what it stored, or with an error of one line.

Kept free of ``mcp`` and of the stores: the joining side imports only this.
"""

from __future__ import annotations

from hybrid_memory.host import jsonc

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Reply:
    """A command's outcome: what it prints on stdout, exactly (newlines included), and its exit code.

    A plain class: a named tuple would load ``collections``, and a hook loads this module.
    """

    __slots__ = ("code", "stdout")

    def __init__(self, stdout: str, code: int = 0) -> None:
        self.stdout, self.code = stdout, code


MAX_MESSAGE_BYTES = 256 * 1024 * 1024
"""The largest single message on the socket (a remember_thread of a whole long session)."""
JOIN_TIMEOUT_S = 60.0
"""How long a client waits for a host that holds the lock (opening its stores) to answer on its socket."""
RETRY_S = 0.05
"""How often a client waiting for a host tries its socket (and the lock) again."""
DRAIN_S = 30.0
"""How long a relay whose client closed its side still waits for the answers in flight."""
REPLAY_ID_PREFIX = "hybrid-memory-rejoin-"
"""The id prefix of a relay's replayed ``initialize``, whose answer the client must not see twice."""

STOP = "hybrid-memory/stop"
"""Asks the host to stop as SIGTERM would; it answers ``{"pid": <its pid>}`` first."""
METHOD = "hybrid-memory/command"
STDERR = "hybrid-memory/stderr"
COMMAND_ERROR = -32000
INJECT = "hybrid-memory/inject"
CAPTURE = "hybrid-memory/capture"
SESSION_START = "session-start"
PROMPT = "prompt"


def line(message: dict[str, Any]) -> bytes:
    """``message`` framed: compact JSON and a newline."""
    return jsonc.dumps(message, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def request(command: str, scope: dict[str, str | None], args: dict[str, Any], *, tty: bool) -> bytes:
    params = {"command": command, "scope": scope, "args": args, "tty": tty}
    return line({"jsonrpc": "2.0", "id": 1, "method": METHOD, "params": params})


def inject_request(event: str, params: dict[str, Any]) -> bytes:
    """A hook's :data:`INJECT` request for ``event`` (:data:`SESSION_START` or :data:`PROMPT`)."""
    return line({"jsonrpc": "2.0", "id": 1, "method": INJECT, "params": {**params, "event": event}})


def capture_request(params: dict[str, Any]) -> bytes:
    """A hook's :data:`CAPTURE` request: ``session_id``, ``transcript`` (its path) and ``cwd``."""
    return line({"jsonrpc": "2.0", "id": 1, "method": CAPTURE, "params": params})


def method_of(first_line: bytes) -> str | None:
    """The method a connection's first line requests (an MCP client's: ``initialize``); None if none."""
    try:
        message = jsonc.loads(first_line)
    except ValueError:
        return None
    method = message.get("method") if isinstance(message, dict) else None
    return method if isinstance(method, str) else None


def stderr_note(text: str) -> bytes:
    return line({"jsonrpc": "2.0", "method": STDERR, "params": {"text": text}})


def answer(reply: Reply) -> bytes:
    return line({"jsonrpc": "2.0", "id": 1, "result": {"stdout": reply.stdout, "code": reply.code}})


def failure(code: int, message: str) -> bytes:
    error = {"code": COMMAND_ERROR, "message": message, "data": {"exit": code}}
    return line({"jsonrpc": "2.0", "id": 1, "error": error})
