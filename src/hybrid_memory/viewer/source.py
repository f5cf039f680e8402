"""What the viewer shows, read through the memory service of a running app; nothing here writes."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from hybrid_memory.models import Memory, Scope
from hybrid_memory.projects import labels
from hybrid_memory.service import RecallOptions
from hybrid_memory.tools.app import AppContext
from hybrid_memory.viewer import graph_page

TEXT_CHARS = 2000
"""A memory's text as the viewer lists it; a message is read whole in its thread."""


ROW_FIELDS = {"id", "kind", "thread_id", "message_id", "role", "note_type", "tags", "created_at", "source"}


def memory_row(memory: Memory, *, chars: int = TEXT_CHARS) -> dict[str, Any]:
    text = memory.text if len(memory.text) <= chars else memory.text[:chars] + " …"
    row = memory.model_dump(mode="json", include=ROW_FIELDS)
    row["text"] = text
    return row


class ViewerSource:
    """The viewer's reads, each scoped to the project the page asks for (the configured user's)."""

    def __init__(self, running: Callable[[], Awaitable[AppContext]]) -> None:
        self._running = running

    async def _open(self, project: str | None) -> tuple[AppContext, Scope]:
        app = await self._running()
        await app.ready()
        scope = app.scope if not project else Scope(project=project, user=app.scope.user)
        return app, scope

    async def projects(self) -> dict[str, Any]:
        app, scope = await self._open(None)
        found = await app.service.projects()
        # A stdio host's configured project is often "default" while its clients' roots filled others.
        default = scope.project if scope.project in found or not found else found[0]
        shown = sorted({*found, default})
        # Projects are repositories' paths: people read their folders' names, told apart when alike.
        return {"projects": shown, "labels": labels(shown), "default": default}

    async def threads(self, project: str | None, offset: int, limit: int) -> dict[str, Any]:
        app, scope = await self._open(project)
        listed = await app.service.list_threads(scope, limit, offset)
        return listed.model_dump(mode="json")

    async def thread(self, project: str | None, thread_id: str) -> dict[str, Any]:
        app, scope = await self._open(project)
        messages = await app.service.thread_messages(scope, thread_id)
        return {"thread_id": thread_id, "messages": [memory_row(m, chars=10**9) for m in messages]}

    async def graph(self, project: str | None) -> dict[str, Any]:
        app, scope = await self._open(project)
        notes, links = await app.service.knowledge.graph(scope)
        sources = await app.service.knowledge.texts(scope, graph_page.source_ids(notes))
        return graph_page.page_data(notes, links, sources)

    async def recall(self, project: str | None, query: str, limit: int) -> dict[str, Any]:
        """What recall_memory ranks for ``query``, every explain field included; no access is recorded."""
        app, scope = await self._open(project)
        result = await app.service.recall(scope, query, RecallOptions(limit=limit), record=False)
        return result.model_dump(mode="json")

    async def recent(self, project: str | None, limit: int) -> dict[str, Any]:
        app, scope = await self._open(project)
        return {"memories": [memory_row(m) for m in await app.service.recent(scope, limit)]}
