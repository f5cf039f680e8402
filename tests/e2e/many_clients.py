"""Many stdio clients on one data dir, each with its own ``hybrid-memory serve``: the shared workload.

Used by ``tests/e2e/test_shared_stdio.py`` (a few calls) and ``bench/many_clients.py`` (many).
Every client runs a mix of remember_thread / create_note / recall_memory and records
what each write acknowledged; :func:`lost_writes` then opens the stores and looks for
every acknowledged id.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter
from typing import Any

import anyio
from mcp import Client, StdioServerParameters

from hybrid_memory.backends import open_vector_store
from hybrid_memory.embeddings import build_embedder
from hybrid_memory.models import MemoryKind, Scope
from tests.conftest import make_settings
from tests.e2e.servers import server_env

PROJECT = "e2e"
TOPICS = ("the lighthouse", "a sourdough starter", "the quarterly budget", "Kraków", "a chess opening")


@dataclass
class ClientReport:
    calls: int = 0
    errors: list[str] = field(default_factory=list)
    memory_ids: list[str] = field(default_factory=list)
    note_ids: list[str] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    refused: str | None = None


def stdio_params(data_dir: Path) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, args=["-m", "hybrid_memory", "serve"], env=server_env(data_dir)
    )


def _call_for(client_no: int, k: int) -> tuple[str, dict[str, Any]]:
    """The k-th call of a client: 2 in 5 remember, 1 in 5 create a note, 2 in 5 recall."""
    topic = TOPICS[(client_no + k) % len(TOPICS)]
    match k % 5:
        case 0 | 1:
            message = {
                "role": "user",
                "id": f"m{k}",
                "content": f"Client {client_no} turn {k} is about {topic}.",
            }
            return "remember_thread", {"thread_id": f"client-{client_no}", "messages": [message]}
        case 2:
            content = f"Client {client_no} decided in step {k} to look into {topic}."
            return "create_note", {"content": content, "type": "decision", "force": True}
        case _:
            return "recall_memory", {"query": f"what did client {client_no} say about {topic}?", "limit": 5}


async def run_client(data_dir: Path, client_no: int, calls: int) -> ClientReport:
    report = ClientReport()
    try:
        async with Client(stdio_params(data_dir)) as client:
            for k in range(calls):
                tool, arguments = _call_for(client_no, k)
                started = perf_counter()
                result = await client.call_tool(tool, arguments)
                report.latencies.append(perf_counter() - started)
                report.calls += 1
                if result.is_error:
                    report.errors.append(f"{tool}: {getattr(result.content[0], 'text', '')[:300]}")
                    continue
                out = result.structured_content or {}
                if tool == "remember_thread":
                    report.memory_ids.extend(out["memory_ids"])
                elif tool == "create_note":
                    report.note_ids.append(out["id"])
    except Exception as exc:  # a server that refused to start or died: counted, not raised
        report.refused = f"{type(exc).__name__}: {exc}"[:300]
    return report


async def run_clients(data_dir: Path, clients: int, calls: int) -> list[ClientReport]:
    """``clients`` stdio clients started at once, ``calls`` calls each."""
    reports: list[ClientReport] = [ClientReport() for _ in range(clients)]

    async def one(i: int) -> None:
        reports[i] = await run_client(data_dir, i, calls)

    async with anyio.create_task_group() as tg:
        for i in range(clients):
            tg.start_soon(one, i)
    return reports


async def lost_writes(data_dir: Path, reports: list[ClientReport]) -> list[str]:
    """Acknowledged memory and note ids that the stores do not hold (every server has exited)."""
    settings = make_settings(data_dir).model_copy(update={"project": PROJECT})
    memory_ids = [i for r in reports for i in r.memory_ids]
    note_ids = [i for r in reports for i in r.note_ids]
    embedder = build_embedder(settings.embedding)  # for its name and dimension; never loaded
    async with open_vector_store(
        settings, dimension=embedder.dimension, model=embedder.model_name
    ) as vectors:
        found = await vectors.get(Scope(project=PROJECT), [*memory_ids, *note_ids])
    kinds = {m.id: m.kind for m in found}
    lost = [i for i in memory_ids if kinds.get(i) is not MemoryKind.MESSAGE]
    return lost + [i for i in note_ids if kinds.get(i) is not MemoryKind.NOTE]
