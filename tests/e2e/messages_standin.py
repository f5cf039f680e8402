"""A scripted stand-in of the Anthropic Messages API on loopback, for driving the real Claude Code.

It answers ``POST /v1/messages`` the way the API does — a server-sent event stream when
the request asks for ``stream``, one JSON message otherwise — with the text (or the tool
call) its ``reply`` function chooses for each request, and records every request body so a test can assert
what the model would have received. Anything else Claude Code asks for (token counting,
its own endpoints) gets a small valid answer so no request hangs.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class ToolUse:
    """A reply that calls a tool: Claude Code runs it and sends the result in its next request."""

    name: str
    input: dict[str, Any]


Reply = Callable[[dict[str, Any]], "str | ToolUse"]


def _default_reply(_: dict[str, Any]) -> str | ToolUse:
    return "Noted."


@dataclass
class StandIn:
    """The running stand-in: its base URL and every request body it received, in order."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)

    def conversation_requests(self) -> list[dict[str, Any]]:
        """The requests that carry the session's conversation (not Claude Code's side calls).

        Claude Code also asks the model for small side answers (a title, a topic check),
        with no tools; the main loop's request offers tools.
        """
        return [r for r in self.requests if r.get("tools")]


def request_text(body: dict[str, Any]) -> str:
    """Every piece of text a request puts before the model: system prompt and messages
    (Anthropic's Messages API), or instructions and input items (OpenAI's Responses API)."""
    parts: list[str] = [str(body.get("instructions") or "")]
    for item in body.get("input", []) if isinstance(body.get("input"), list) else []:
        content = item.get("content") if isinstance(item, dict) else None
        if isinstance(content, str):
            parts.append(content)
        for block in content if isinstance(content, list) else []:
            if isinstance(block, dict):
                parts.append(str(block.get("text", "")))
    gemini = [body.get("systemInstruction"), *(body.get("contents") or [])]
    for content in gemini:  # Gemini's API: contents and a system instruction, each a list of parts
        for part in content.get("parts", []) if isinstance(content, dict) else []:
            if isinstance(part, dict):
                parts.append(str(part.get("text", "")))
    system = body.get("system")
    if isinstance(system, str):
        parts.append(system)
    elif isinstance(system, list):
        parts.extend(str(block.get("text", "")) for block in system if isinstance(block, dict))
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
            continue
        for block in content or []:
            if isinstance(block, dict):
                parts.append(str(block.get("text", "")))
                if isinstance(block.get("content"), str | list):
                    parts.append(json.dumps(block["content"]))
    return "\n".join(parts)


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n".encode()


def _block(reply: str | ToolUse) -> dict[str, Any]:
    if isinstance(reply, ToolUse):
        return {
            "type": "tool_use",
            "id": f"toolu_{uuid.uuid4().hex[:24]}",
            "name": reply.name,
            "input": reply.input,
        }
    return {"type": "text", "text": reply}


def _message(body: dict[str, Any], reply: str | ToolUse) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude-standin"),
        "content": [_block(reply)],
        "stop_reason": "tool_use" if isinstance(reply, ToolUse) else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
    }


def _stream(body: dict[str, Any], reply: str | ToolUse) -> Iterator[bytes]:
    message = _message(body, reply)
    block = message["content"][0]
    start = {**message, "content": [], "stop_reason": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
    yield _sse("message_start", {"type": "message_start", "message": start})
    if isinstance(reply, ToolUse):
        opening = {**block, "input": {}}
        delta = {"type": "input_json_delta", "partial_json": json.dumps(reply.input)}
    else:
        opening, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": reply}
    yield _sse("content_block_start", {"type": "content_block_start", "index": 0, "content_block": opening})
    yield _sse("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta})
    yield _sse("content_block_stop", {"type": "content_block_stop", "index": 0})
    yield _sse(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": message["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": message["usage"]["output_tokens"]},
        },
    )
    yield _sse("message_stop", {"type": "message_stop"})


def _responses_stream(body: dict[str, Any], text: str) -> Iterator[bytes]:
    item_id = f"msg_{uuid.uuid4().hex[:24]}"
    item = {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    usage = {
        "input_tokens": 10,
        "output_tokens": 2,
        "total_tokens": 12,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    response = {
        "id": f"resp_{uuid.uuid4().hex[:24]}",
        "object": "response",
        "model": body.get("model", "standin"),
        "status": "completed",
        "output": [item],
        "usage": usage,
    }
    started = {**response, "status": "in_progress", "output": []}
    yield _sse("response.created", {"type": "response.created", "response": started})
    added = {**item, "status": "in_progress", "content": []}
    yield _sse(
        "response.output_item.added", {"type": "response.output_item.added", "output_index": 0, "item": added}
    )
    delta = {"item_id": item_id, "output_index": 0, "content_index": 0, "delta": text}
    yield _sse("response.output_text.delta", {"type": "response.output_text.delta", **delta})
    yield _sse(
        "response.output_item.done", {"type": "response.output_item.done", "output_index": 0, "item": item}
    )
    yield _sse("response.completed", {"type": "response.completed", "response": response})


def _gemini_chunk(text: str) -> dict[str, Any]:
    return {
        "candidates": [
            {"content": {"role": "model", "parts": [{"text": text}]}, "finishReason": "STOP", "index": 0}
        ],
        "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 2, "totalTokenCount": 12},
        "modelVersion": "gemini-standin",
    }


def _chat_chunks(body: dict[str, Any], text: str) -> Iterator[bytes]:
    """OpenAI's Chat Completions API, streamed (what opencode's OpenAI-compatible providers ask for)."""
    base = {"id": f"chatcmpl-{uuid.uuid4().hex[:24]}", "object": "chat.completion.chunk", "created": 0}
    base["model"] = body.get("model", "standin")
    deltas = [({"role": "assistant", "content": ""}, None), ({"content": text}, None), ({}, "stop")]
    for delta, finish in deltas:
        chunk = {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
        yield f"data: {json.dumps(chunk)}\n\n".encode()
    usage = {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}
    yield f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode()
    yield b"data: [DONE]\n\n"


def _handler(standin: StandIn, reply: Reply, lock: threading.Lock) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            return  # quiet: a test reads the recorded requests, not a log

        def _send_json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _respond(self, body: dict[str, Any], answer: str | ToolUse) -> None:
            """OpenAI's Responses API, streamed, as Codex CLI asks for it (text answers only)."""
            text = answer if isinstance(answer, str) else ""
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            for chunk in _responses_stream(body, text):
                self.wfile.write(chunk)
            self.wfile.flush()
            self.close_connection = True

        def _stream_out(self, chunks: Iterator[bytes]) -> None:
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("connection", "close")
            self.end_headers()
            for chunk in chunks:
                self.wfile.write(chunk)
            self.wfile.flush()
            self.close_connection = True

        def _other_api(self, path: str, body: dict[str, Any]) -> bool:
            """Gemini's API (Gemini CLI) and Chat Completions (opencode): answered here when asked."""
            if path.endswith(":countTokens"):
                self._send_json(200, {"totalTokens": 10})
                return True
            if path.endswith(":streamGenerateContent") or path.endswith(":generateContent"):
                with lock:
                    standin.requests.append(body)
                answer = reply(body)
                text = answer if isinstance(answer, str) else ""
                if path.endswith(":generateContent"):
                    self._send_json(200, _gemini_chunk(text))
                else:
                    self._stream_out(iter([f"data: {json.dumps(_gemini_chunk(text))}\r\n\r\n".encode()]))
                return True
            if path.endswith("/chat/completions"):
                with lock:
                    standin.requests.append(body)
                answer = reply(body)
                self._stream_out(_chat_chunks(body, answer if isinstance(answer, str) else ""))
                return True
            return False

        def do_HEAD(self) -> None:
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def do_GET(self) -> None:
            with lock:
                standin.paths.append(f"GET {self.path}")
            self._send_json(200, {"data": [], "has_more": False})

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length) if length else b"{}"
            try:
                body = json.loads(raw)
            except ValueError:
                body = {}
            path = self.path.split("?", 1)[0]
            with lock:
                standin.paths.append(f"POST {path}")
            if self._other_api(path, body):
                return
            if path.endswith("/responses"):
                with lock:
                    standin.requests.append(body)
                self._respond(body, reply(body))
                return
            if path.endswith("/count_tokens"):
                self._send_json(200, {"input_tokens": max(1, len(raw) // 4)})
                return
            if not path.endswith("/v1/messages"):
                self._send_json(200, {})
                return
            with lock:
                standin.requests.append(body)
            answer = reply(body)
            if not body.get("stream"):
                self._send_json(200, _message(body, answer))
                return
            self.send_response(200)
            self.send_header("content-type", "text/event-stream")
            self.send_header("cache-control", "no-cache")
            self.send_header("connection", "close")
            self.end_headers()
            for chunk in _stream(body, answer):
                self.wfile.write(chunk)
            self.wfile.flush()
            self.close_connection = True

    return Handler


@contextmanager
def messages_standin(reply: Reply = _default_reply) -> Iterator[StandIn]:
    """Serve the stand-in on a free loopback port for the duration of the block."""
    lock = threading.Lock()
    standin = StandIn(url="")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(standin, reply, lock))
    server.daemon_threads = True
    standin.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, name="messages-standin", daemon=True)
    thread.start()
    try:
        yield standin
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=10)
