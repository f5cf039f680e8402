"""Every tool call passes here: unstorable text is refused, and every error reply is short.

One server middleware, not a check per tool. Before a call runs, its arguments are
walked for NUL characters and lone surrogates (no store keeps them faithfully) and the
call is refused with one sentence (``remember_thread`` skips such a message and stores
the rest). After it, an error reply is rewritten to be short:
the SDK's pydantic report (one entry per bad item, each echoing the input: 2.8 MB for
a 10,000-item list) becomes a count and the first few problems, and any long run of
non-space characters an error echoes back (a 100,000-character id) is cut to a prefix.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent

MAX_ERROR_CHARS = 800
"""No error reply is longer than this."""
ECHO_CHARS = 40
"""The most of one piece of the caller's input an error repeats."""
SHOWN_PROBLEMS = 3
"""How many argument problems a validation error lists; the rest are counted."""

_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_CHECKS_EACH_ITEM = frozenset({"remember_thread"})
"""Tools whose service skips (and counts) an unstorable message: one must not refuse the whole thread."""
_LONG_RUN = re.compile(rf"[^\s'\"]{{{ECHO_CHARS + 20},}}")
_PYDANTIC_HEADER = re.compile(r"^(?P<prefix>.*?: )?(?P<count>\d+) validation errors? for \S+\n")
_PYDANTIC_ENTRY = re.compile(r"^(?P<loc>\S[^\n]*)\n  (?P<msg>[^\n]*?)(?: \[type=[^\n]*)?$", re.MULTILINE)


def _unstorable(value: Any, path: str) -> tuple[str, str] | None:
    """The first argument path holding a NUL or a lone surrogate, and which of the two."""
    if isinstance(value, str):
        found = _UNSTORABLE.search(value)
        if found is None:
            return None
        return path, "a NUL character" if found.group() == "\x00" else "a lone surrogate"
    if isinstance(value, Mapping):
        for key, item in value.items():
            hit = _unstorable(str(key), path) or _unstorable(item, f"{path}.{key}" if path else str(key))
            if hit is not None:
                return hit
    elif isinstance(value, list | tuple):
        for index, item in enumerate(value):
            hit = _unstorable(item, f"{path}[{index}]")
            if hit is not None:
                return hit
    return None


def _short(text: str) -> str:
    """``text`` with every long run of non-space characters cut to a prefix saying its length."""
    return _LONG_RUN.sub(lambda m: f"{m.group()[:ECHO_CHARS]}… ({len(m.group()):,} characters)", text)


def bounded_error(text: str) -> str:
    """An error reply of at most MAX_ERROR_CHARS, a pydantic report reduced to its first problems."""
    header = _PYDANTIC_HEADER.match(text)
    if header is not None:
        entries = list(_PYDANTIC_ENTRY.finditer(text, header.end()))
        count = int(header.group("count"))
        shown = "; ".join(
            f"{_short(m.group('loc'))}: {_short(m.group('msg'))}" for m in entries[:SHOWN_PROBLEMS]
        )
        more = f" (and {count - SHOWN_PROBLEMS:,} more)" if count > SHOWN_PROBLEMS else ""
        noun, them = ("argument problem", "it") if count == 1 else ("argument problems", "them")
        text = (
            f"{header.group('prefix') or ''}{count:,} {noun}: {shown}{more}. "
            f"Fix {them} and call again; the tool's input schema describes every argument."
        )
    text = _short(text)
    return text if len(text) <= MAX_ERROR_CHARS else text[: MAX_ERROR_CHARS - 1] + "…"


def refuse_unknown_arguments(tool: str, arguments: Mapping[str, Any], schema: Mapping[str, Any]) -> None:
    """A misspelled or invented argument is an error naming the valid ones, never silently ignored."""
    valid = list(schema.get("properties", {}))
    unknown = [name for name in arguments if name not in valid]
    if unknown:
        named = ", ".join(repr(_short(str(name))) for name in unknown[:SHOWN_PROBLEMS])
        more = f" (and {len(unknown) - SHOWN_PROBLEMS:,} more)" if len(unknown) > SHOWN_PROBLEMS else ""
        raise ToolError(f"{tool} has no argument {named}{more}. Its arguments: {', '.join(valid) or 'none'}.")


def _refusal(name: str, path: str, what: str) -> CallToolResult:
    where = _short(path) or "an argument"
    text = (
        f"Error executing tool {_short(name)}: {where} contains {what}; "
        "text and ids may not contain NUL characters or lone surrogates, remove it and call again."
    )
    return CallToolResult(content=[TextContent(text=text)], is_error=True)


async def guard_tool_calls(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """Server middleware: refuse unstorable arguments, bound every tool error reply."""
    if ctx.method != "tools/call" or not isinstance(ctx.params, Mapping):
        return await call_next(ctx)
    name = str(ctx.params.get("name", ""))
    found = None if name in _CHECKS_EACH_ITEM else _unstorable(ctx.params.get("arguments") or {}, "")
    if found is not None:
        return _refusal(name, *found)
    result = await call_next(ctx)
    if isinstance(result, dict) and result.get("isError") and isinstance(result.get("content"), list):
        result["content"] = [
            {**block, "text": bounded_error(block["text"])}
            if isinstance(block, dict) and isinstance(block.get("text"), str)
            else block
            for block in result["content"]
        ]
    return result
