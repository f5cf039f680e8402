"""What each store command does, the same whether it runs in this process or in the running server.

A body gets a :class:`Target`: the caller's settings (its project, user and flags) and,
when a server holds the store, that server's open service. Without one, the body opens
the stores itself, as it did before there was a server to join. Either way it answers
with a :class:`Reply` the command prints, so the output cannot depend on where it ran.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

import anyio

from hybrid_memory.host.wire import Reply
from hybrid_memory.models import Scope
from hybrid_memory.settings import Settings

if TYPE_CHECKING:
    from hybrid_memory.service import MemoryService


@dataclass(frozen=True)
class Target:
    settings: Settings
    """The caller's: its project and user decide the scope; a host's stores keep its own backends."""
    service: MemoryService | None
    """The running server's open service; None: open the stores in this process."""
    stderr: TextIO
    """Where progress and notes go: the caller's stderr, relayed when the body runs in the server."""

    @property
    def scope(self) -> Scope:
        return Scope(project=self.settings.project or "default", user=self.settings.user)

    @asynccontextmanager
    async def open(self) -> AsyncIterator[MemoryService]:
        """The server's service, or this process's own over the stores (model left unloaded)."""
        if self.service is not None:
            yield self.service
            return
        from hybrid_memory.server.app import open_app

        async with open_app(self.settings, warm_up=False) as app:
            yield app.service


Body = Callable[[Target, Mapping[str, Any]], Awaitable[Reply]]


async def stats(target: Target, args: Mapping[str, Any]) -> Reply:
    from hybrid_memory.integrations.pending import notice

    waiting = notice(target.settings.data_dir)  # captures that failed and wait: a person should know
    if waiting:
        print(waiting, file=target.stderr)
    async with target.open() as service:
        if args.get("legacy"):
            await service.adopt(args["legacy"], target.scope)
        return Reply((await service.stats(target.scope)).model_dump_json(indent=2) + "\n")


async def cleanup(target: Target, args: Mapping[str, Any]) -> Reply:
    from hybrid_memory.models import PreviewItem

    project = target.scope.project
    async with target.open() as service:
        if not args["dry_run"]:
            done = await service.cleanup(target.scope)
            summary = f"; summary {done.summary_id}" if done.summary_id else ""
            deleted = f"{done.deleted} expired memories deleted, {done.evicted} evicted"
            return Reply(f"project {project}: {deleted}{summary}\n")
        items: list[PreviewItem] = []
        cursor: str | None = None
        while True:
            page = await service.forget_preview(target.scope, 200, cursor)
            items.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
    lines = [f"{i.reason:<10} {i.kind.value:<8} {i.id}  {' '.join(i.text.split())[:60]}" for i in items]
    expired = sum(1 for i in items if i.reason == "expired")
    replaced = " (replaced by one summary)" if page.summarized and len(items) > expired else ""
    lines.append(
        f"project {project}: {expired} expired memories would be deleted, {len(items) - expired} evicted"
        f"{replaced}; nothing changed (--dry-run)"
    )
    return Reply("".join(line + "\n" for line in lines))


async def graph(target: Target, args: Mapping[str, Any]) -> Reply:
    from hybrid_memory.viewer import graph_page

    async with target.open() as service:
        notes, links = await service.knowledge.graph(target.scope)
        sources = await service.knowledge.texts(target.scope, graph_page.source_ids(notes))
    page = graph_page.render(
        f"hybrid-memory: {target.scope.project}", graph_page.page_data(notes, links, sources)
    )
    path = Path(args["html"])
    await anyio.Path(path).write_text(page, encoding="utf-8")
    target.stderr.write(f"wrote {path} ({len(notes)} notes)\n")
    return Reply("")


async def export(target: Target, args: Mapping[str, Any]) -> Reply:
    from hybrid_memory.transfer import Progress, export_file

    result = await export_file(
        target.settings,
        Path(args["file"]),
        projects=args["projects"],
        all_projects=args["all_projects"],
        with_embeddings=args["with_embeddings"],
        progress=Progress(enabled=not args["quiet"], stream=target.stderr),
        opened=None if target.service is None else target.service.stores,
    )
    counts = result.counts
    skipped = f"; {result.skipped_private} private items left out" if result.skipped_private else ""
    return Reply(
        f"exported {counts['memory']} memories, {counts['note']} notes, {counts['link']} links "
        f"from {len(result.scopes)} scope(s) to {result.file}{skipped}\n"
    )


async def import_(target: Target, args: Mapping[str, Any]) -> Reply:
    from hybrid_memory.transfer import Progress, import_file

    result = await import_file(
        target.settings,
        Path(args["file"]),
        source=None if args["format"] == "auto" else args["format"],
        dry_run=args["dry_run"],
        progress=Progress(enabled=not args["quiet"], stream=target.stderr),
        opened=target.service,
    )
    found = result.in_file
    summary = f"{found['memory']} memories, {found['note']} notes, {found['link']} links"
    if result.dry_run:
        return Reply(f"{result.file} is valid ({result.format}): {summary}; nothing written (--dry-run)\n")
    written, same = result.written, result.unchanged
    return Reply(
        f"imported {result.file} ({result.format}): {summary}; written "
        f"{written['memory']}/{written['note']}/{written['link']}, unchanged "
        f"{same['memory']}/{same['note']}/{same['link']} (memories/notes/links); "
        f"{result.embedded} memories embedded, {result.indexed_notes} notes indexed\n"
    )


async def recall(target: Target, args: Mapping[str, Any]) -> Reply:
    from hybrid_memory.service import RecallOptions
    from hybrid_memory.tools._present import present

    call = {"query": args["query"], "limit": args["limit"]}
    options = RecallOptions(limit=args["limit"], work_tree=Path(args["cwd"]) if args.get("cwd") else None)
    async with target.open() as service:
        if args.get("legacy"):  # the directory's project, first used here: its old name's memories join it
            await service.adopt(args["legacy"], target.scope)
        result = await service.recall(target.scope, args["query"], options)
        # What the recall_memory tool sends: the same bounded result, as text and as data.
        answer = present(result, call, service.embedder)
    if args["json"]:
        return Reply(json.dumps(answer.structured_content, indent=2, ensure_ascii=False) + "\n")
    text = "".join(getattr(block, "text", "") for block in answer.content)
    return Reply(text + "\n")


async def forget_project(target: Target, args: Mapping[str, Any]) -> Reply:
    from hybrid_memory.integrations.opencode import forget_transcripts

    async with target.open() as service:
        sessions: list[str] = []
        offset: int | None = 0
        while offset is not None:
            page = await service.list_threads(target.scope, 1000, offset)
            sessions += [t.thread_id for t in page.threads]
            offset = page.next_offset
        done = await service.forget_project(target.scope)
    forget_transcripts(target.settings.data_dir, sessions)  # what opencode's hooks kept of its sessions
    return Reply(
        f"project {target.scope.project}: forgot {done.deleted_memories} memories and "
        f"{done.deleted_notes} notes (with their links)\n"
    )


async def move_project(target: Target, args: Mapping[str, Any]) -> Reply:
    old = Scope(project=args["source"], user=target.scope.user)
    into = target.scope.project
    if old.project == into:
        return Reply(f"project {into} is already where it would move to; nothing moved\n")
    async with target.open() as service:
        memories, notes = await service.move_project(old, into, args["threads"])
    return Reply(f"moved {memories} memories and {notes} notes from {old.project} to {into}\n")


async def sync(target: Target, args: Mapping[str, Any]) -> Reply:
    from hybrid_memory.transfer.sync import sync as sync_with

    async with target.open() as service:
        done = await sync_with(
            service, args["remote"], data_dir=target.settings.data_dir, cwd=args.get("cwd")
        )
    return Reply(done.line())


BODIES: dict[str, Body] = {
    "stats": stats,
    "cleanup": cleanup,
    "graph": graph,
    "export": export,
    "import": import_,
    "recall": recall,
    "forget": forget_project,
    "move-project": move_project,
    "sync": sync,
}
"""Every command that reads or writes the store, by name."""
