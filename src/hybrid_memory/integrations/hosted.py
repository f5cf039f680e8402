"""The host's side of a hook's request: the text to inject, built on the open stores.

A hook connects to ``serve.sock`` and sends one line, a :data:`~hybrid_memory.host.wire.INJECT`
request (the event, the session, its directory, the prompt and the hooks' limits); the
host answers with one line: the text, the ids it cites and its tokens, or an error whose
message is one line for people (a store that cannot open names its file).
"""

from __future__ import annotations

import contextlib
import json
import logging
import weakref
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import anyio.abc

from hybrid_memory.errors import InvalidInputError
from hybrid_memory.host import wire
from hybrid_memory.integrations.config import HOOK_VARIABLES
from hybrid_memory.models import Scope
from hybrid_memory.projects import legacy_project_name, project_name, root_uri
from hybrid_memory.service.injection import Injection, Injector, Limits
from hybrid_memory.tools.app import AppContext

if TYPE_CHECKING:
    from hybrid_memory.service.memory_service import MemoryService

logger = logging.getLogger(__name__)

ANSWER_WITHIN_S = 60.0
"""The longest a host that stops waits for an injection in progress."""

_DEFAULTS = {variable.field: variable.default for variable in HOOK_VARIABLES}

_injectors: weakref.WeakKeyDictionary[MemoryService, Injector] = weakref.WeakKeyDictionary()
"""The host's injector, kept from one hook to the next (it remembers what it counted)."""


async def session_scope(app: AppContext, cwd: Path | None) -> Scope:
    """The session's scope, as its MCP session would have it with ``cwd`` its root."""
    if not app.project_from_roots or cwd is None:
        return app.scope
    uri = root_uri(cwd)
    project = project_name(uri)
    if project is None:
        return app.scope
    scope = app.scope.model_copy(update={"project": project})
    await app.adopt(legacy_project_name(uri), scope)
    return scope


def limits(raw: Any = None) -> Limits:
    """The limits a hook sent (``raw``), each one it left out at the hooks' default."""
    given = {**_DEFAULTS, **(raw if isinstance(raw, dict) else {})}
    return Limits(
        context_tokens=int(given["context_tokens"]),
        prompt_tokens=int(given["prompt_tokens"]),
        min_match=float(given["min_match"]),
        min_note_match=float(given["min_note_match"]),
    )


async def inject(app: AppContext, params: dict[str, Any]) -> Injection:
    """The injection ``params`` ask for (see :func:`hybrid_memory.host.wire.inject_request`)."""
    event = params.get("event")
    cwd = Path(params["cwd"]) if isinstance(params.get("cwd"), str) and params["cwd"] else None
    session_id = params.get("session_id") if isinstance(params.get("session_id"), str) else None
    asked = limits(params.get("limits"))
    await app.ready()
    scope = await session_scope(app, cwd)
    injector = _injectors.get(app.service)
    if injector is None:
        injector = _injectors[app.service] = Injector(app.service)
    if event == wire.SESSION_START:
        return await injector.session_start(scope, session_id, asked)
    if event == wire.PROMPT:
        prompt = params.get("prompt")
        if not isinstance(prompt, str):
            raise InvalidInputError("a prompt injection needs the prompt's text (params.prompt)")
        return await injector.prompt(scope, prompt, session_id, cwd, asked)
    known = f"{wire.SESSION_START!r} or {wire.PROMPT!r}"
    raise InvalidInputError(f"unknown injection event {event!r}; use {known}")


async def serve_injection(first_line: bytes, stream: anyio.abc.ByteStream, app: AppContext) -> None:
    """Answer the injection request in ``first_line`` on ``stream``; the caller closes the stream.

    Shielded (within :data:`ANSWER_WITHIN_S`): a store that cannot open stops the host, and this
    answer is what tells the session why.
    """

    async def injected(params: dict[str, Any]) -> dict[str, Any]:
        done = await inject(app, params)
        return {"text": done.text, "ids": done.ids, "tokens": done.tokens}

    with anyio.CancelScope(shield=True) as answering:
        answering.deadline = anyio.current_time() + ANSWER_WITHIN_S
        await answer(first_line, stream, injected, "an injection")


async def answer(
    first_line: bytes,
    stream: anyio.abc.ByteStream,
    work: Callable[[dict[str, Any]], Awaitable[dict[str, Any]]],
    doing: str,
) -> None:
    """Reply on ``stream`` to the one-line request ``first_line`` with what ``work`` makes of its params,
    or with a failure the hook shows as one line (the host goes on); a hook that gave up waiting gets
    nothing."""
    from hybrid_memory.exits import classify

    try:
        request = json.loads(first_line)
        params = request.get("params") if isinstance(request, dict) else None
        result = await work(params if isinstance(params, dict) else {})
        reply = wire.line({"jsonrpc": "2.0", "id": 1, "result": result})
    except Exception as exc:
        code, message = classify(exc)
        logger.info("%s failed: %s", doing, message)
        reply = wire.failure(code, message)
    with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
        await stream.send(reply)
