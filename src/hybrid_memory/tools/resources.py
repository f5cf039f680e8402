"""Resources a client can attach to a conversation: core memory, a thread, a note with its links.

Each reads the session's project, as a tool call does (``SessionScope``: the configured
project, else the client's first root's, else the one a joined server relays), and is cut to
:data:`MAX_RESOURCE_CHARS`, with a last line saying how to read the rest. An id that
does not exist answers JSON-RPC ``invalid params`` (-32602), without a traceback.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceNotFoundError
from mcp_types import InputRequiredResult

from hybrid_memory.errors import NotFoundError
from hybrid_memory.models import Link, Memory, Note, Scope, Walk
from hybrid_memory.text.citation import cite
from hybrid_memory.tools._common import session_scope
from hybrid_memory.tools.app import AppContext, AppCtx, app

MAX_RESOURCE_CHARS = 40_000
"""About 10,000 tokens: enough for a long thread's gist, well under a client's tool-output cap."""
MAX_CORE_ITEMS = 100

CORE_URI = "memory://core"
THREAD_URI = "memory://thread/{thread_id}"
NOTE_URI = "memory://note/{note_id}"


def bounded(lines: Sequence[str], rest: str, limit: int = MAX_RESOURCE_CHARS) -> str:
    """Join ``lines`` up to ``limit`` characters; past it, one last line: how many were cut and ``rest``."""
    kept: list[str] = []
    used = 0
    for i, line in enumerate(lines):
        if used + len(line) + 1 > limit:
            if not kept:  # one huge line: its start is better than nothing
                kept.append(line[: max(limit - 200, 0)] + " …")
                i += 1
            kept.append(f"[{len(lines) - i} more not shown: {rest}]")
            break
        kept.append(line)
        used += len(line) + 1
    return "\n".join(kept)


def _memory_line(memory: Memory) -> str:
    who = f"{memory.role} " if memory.role else ""
    return f"{cite(memory.id)} {who}{memory.created_at:%Y-%m-%d}: {' '.join(memory.text.split())}"


def _note_line(note: Note) -> str:
    tags = f" #{' #'.join(note.tags)}" if note.tags else ""
    return f"{cite(note.id)} {note.type.value}{tags}: {' '.join(note.content.split())}"


def _link_line(link: Link) -> str:
    return f"{link.from_id} -{link.relation.value}-> {link.to_id} ({link.strength:g})"


async def core_memory(state: AppContext, scope: Scope | None = None) -> str:
    """The pinned memories of the project, most important first (pin_memory adds to them)."""
    memories = await state.service.core_memory(scope or state.scope, MAX_CORE_ITEMS)
    if not memories:
        return "No core memory yet: pin_memory moves a memory or note here."
    return bounded([_memory_line(m) for m in memories], "unpin what is no longer needed")


async def session_core_memory(ctx: AppCtx) -> str | InputRequiredResult:
    """Core memory of the session's project (the SDK hands a static resource no context: the server
    reads this one itself, with the request's)."""
    scope = await session_scope(ctx)
    if isinstance(scope, InputRequiredResult):
        return scope
    return await core_memory(app(ctx), scope)


async def thread(thread_id: str, ctx: AppCtx) -> str | InputRequiredResult:
    """A remembered conversation's messages in order, one line each with its [memory:<id>]."""
    scope = await session_scope(ctx)
    if isinstance(scope, InputRequiredResult):
        return scope
    try:
        memories = await app(ctx).service.thread_messages(scope, thread_id)
    except NotFoundError as exc:
        raise ResourceNotFoundError(str(exc)) from exc
    return bounded(
        [f"thread {thread_id}: {len(memories)} memories", *map(_memory_line, memories)],
        f"recall_memory(thread_id='{thread_id}') finds what you need in the rest",
    )


async def note(note_id: str, ctx: AppCtx) -> str | InputRequiredResult:
    """A note, the notes linked to it (one step, either direction) and the links between them."""
    scope = await session_scope(ctx)
    if isinstance(scope, InputRequiredResult):
        return scope
    try:
        found = await app(ctx).service.linked_notes(scope, Walk(note_id=note_id, limit=50))
    except NotFoundError as exc:
        raise ResourceNotFoundError(str(exc)) from exc
    start, *linked = found.notes
    lines = [_note_line(start)]
    if linked:
        lines += ["linked notes:", *map(_note_line, linked)]
    if found.links:
        lines += ["links:", *map(_link_line, found.links)]
    return bounded(lines, f"get_linked_notes(note_id='{note_id}') pages through them")


def register_resources(server: MCPServer[Any], running: Callable[[], Awaitable[AppContext]]) -> None:
    """Register the three resources; their docstrings are what clients show.

    ``running`` gives the open application for a read outside a request; a request's read
    of core memory is :func:`session_core_memory`'s (see the server's ``read_resource``).
    """
    text = "text/plain"

    async def core() -> str:
        return await core_memory(await running())

    core.__doc__ = core_memory.__doc__
    server.resource(CORE_URI, name="core-memory", title="Core memory", mime_type=text)(core)
    server.resource(THREAD_URI, name="thread", title="A remembered thread", mime_type=text)(thread)
    server.resource(NOTE_URI, name="note", title="A note and its links", mime_type=text)(note)
