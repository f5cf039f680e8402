"""LoCoMo through the real server: ``hybrid-memory serve`` as a child process, over MCP stdio.

This module is an MCP *client*, like the CLI: it imports ``mcp`` to drive the
server exactly as a user's agent would, so what it measures includes the
protocol, the tool layer and the process boundary.

Each conversation gets its own server process and its own project scope
(``HYBRID_MEMORY_PROJECT=<conversation id>``), all in one temporary data dir, so
the scope filter is exercised as the store grows; the keyword channels' IDF is the
whole store's, every conversation in it. ``separate_stores`` gives each conversation a
data dir of its own instead, as if it were the only project. Per conversation:

1. a first ``recall_memory`` loads the model (timed as start-up, not as a query);
2. each session is one ``remember_thread`` call: thread ``session_<n>``, one
   message per turn with the turn's ``dia_id`` as message id, the session's date
   as ``created_at``, ``"<speaker>: <text>"`` (plus ``" [image: <caption>]"``)
   as content, the first speaker as ``user`` and the second as ``assistant``;
3. each question is one ``recall_memory(query=question, limit=limit)`` across
   all threads; the ranked ``message_id``s are what is scored. A message result
   without a ``message_id`` is counted and keeps its rank as a miss.
"""

from __future__ import annotations

import logging
import os
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from time import perf_counter
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError

from hybrid_memory.errors import HybridMemoryError
from hybrid_memory.evaluation.locomo import Conversation, Dataset, RetrieverRun, Session, load_locomo
from hybrid_memory.evaluation.report import build_report
from hybrid_memory.settings import EmbeddingSettings

logger = logging.getLogger(__name__)

SERVER_RUN = "hybrid-memory"
CARRIED_RUN = "hybrid-memory, carried turns as turns"
"""The same answers read as the turns an agent sees: each hit, then the turns it carries.

Scored at equal turn count (R@10 is the first ten turns shown, carried ones included),
so a hit's context is not free evidence."""
BASELINE_DEPTH = 100
"""How deep each baseline ranks before fusion; every ranking is cut to the recall limit for scoring."""
CALL_TIMEOUT_S = 300.0
WARM_UP_QUERY = "warm-up: load the embedding model"


class EvaluationError(HybridMemoryError):
    """The server refused a call, answered without structured content, or stopped answering."""


@dataclass(frozen=True)
class EvalOptions:
    """How a benchmark is run, whichever it is: the ``eval`` command's common flags."""

    embedding: EmbeddingSettings
    """The model the server reads from the same environment; the dense baseline loads it too."""
    half: str | None = None
    """``tune`` or ``held-out``: only the even or the odd conversations or items; None: all."""
    limit: int = 20
    """recall_memory's limit per question; every ranking is cut to it for scoring."""
    baselines: bool = True
    separate_stores: bool = False


def server_env(data_dir: Path, project: str, model_path: Path | None) -> dict[str, str]:
    """The child's environment: ours, minus remote stores, pinned to embedded stores in ``data_dir``.

    Other ``HYBRID_MEMORY_*`` variables (ranking weights, chunk sizes, the model)
    pass through, so a user can evaluate a configuration by exporting it.
    """
    remote = ("QDRANT_", "NEO4J_", "HYBRID_MEMORY_QDRANT_", "HYBRID_MEMORY_NEO4J_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(remote)}
    env.update(
        HYBRID_MEMORY_DATA_DIR=str(data_dir),
        HYBRID_MEMORY_PROJECT=project,
        HYBRID_MEMORY_VECTOR_BACKEND="edge",
        HYBRID_MEMORY_GRAPH_BACKEND="sqlite",
    )
    env.setdefault("HYBRID_MEMORY_LOG_LEVEL", "WARNING")
    if model_path is not None:
        env["HYBRID_MEMORY_EMBEDDING_MODEL_PATH"] = str(model_path)
    return env


def session_messages(conv: Conversation, session: Session) -> list[dict[str, Any]]:
    """The ``remember_thread`` messages of one session."""
    return [
        {
            "role": "user" if turn.speaker == conv.speaker_a else "assistant",
            "content": turn.content,
            "id": turn.dia_id,
            "created_at": session.date.isoformat(),
        }
        for turn in session.turns
    ]


async def call_tool(client: Client, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    result = await client.call_tool(tool, arguments, read_timeout_seconds=CALL_TIMEOUT_S)
    if result.is_error:
        text = "".join(getattr(block, "text", "") for block in result.content)
        raise EvaluationError(f"{tool} failed: {text or 'no message'}")
    if result.structured_content is None:
        raise EvaluationError(f"{tool} returned no structured content")
    return dict(result.structured_content)


class _Tally:
    """Counts that belong in the report: what ingest stored, what recall returned."""

    def __init__(self) -> None:
        self.ingest = Counter[str]()
        self.results = Counter[str]()
        self.evidence_channels = Counter[str]()
        self.warm_up_s: list[float] = []


def _shown_turns(hits: list[dict[str, Any]]) -> list[str]:
    """Each hit's id as ``_ranked_ids`` gives it, followed by the turns it carries; each turn once."""
    shown: list[str] = []
    for hit in hits:
        shown.append(str(hit.get("message_id") or f"<{hit.get('kind')}:{hit.get('id')}>"))
        for turn in (hit.get("context_before"), hit.get("context_after")):
            if turn:
                shown.append(str(turn.get("message_id") or f"<message:{turn.get('id')}>"))
    return list(dict.fromkeys(shown))


def _ranked_ids(hits: list[dict[str, Any]], evidence: tuple[str, ...], tally: _Tally) -> list[str]:
    ranked = []
    for rank, hit in enumerate(hits, start=1):
        kind = str(hit.get("kind"))
        tally.results[f"kind:{kind}"] += 1
        message_id = hit.get("message_id")
        if kind == "message" and not message_id:
            tally.results["message without message_id"] += 1
        if kind != "message" or not message_id:
            ranked.append(f"<{kind}:{hit.get('id')}>")  # keeps its rank, matches no evidence
            continue
        ranked.append(str(message_id))
        if rank <= 10 and message_id in evidence:
            tally.evidence_channels["+".join(sorted(hit.get("channels") or ["none"]))] += 1
    return ranked


async def _run_conversation(
    conv: Conversation,
    data_dir: Path,
    model_path: Path | None,
    limit: int,
    runs: tuple[RetrieverRun, RetrieverRun],
    tally: _Tally,
) -> None:
    run, carried = runs
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "hybrid_memory", "serve"],
        env=server_env(data_dir, conv.id, model_path),
    )
    started = perf_counter()
    async with Client(params) as client:
        await call_tool(client, "recall_memory", {"query": WARM_UP_QUERY, "limit": 1})
        tally.warm_up_s.append(perf_counter() - started)

        started = perf_counter()
        for session in conv.sessions:
            stored = await call_tool(
                client,
                "remember_thread",
                {"thread_id": f"session_{session.number}", "messages": session_messages(conv, session)},
            )
            for field in ("stored", "unchanged", "skipped_messages", "chunks"):
                tally.ingest[field] += int(stored[field])
        ingest_s = perf_counter() - started
        run.ingest_s = (run.ingest_s or 0.0) + ingest_s

        query_s: list[float] = []
        for question in conv.questions:
            started = perf_counter()
            found = await call_tool(client, "recall_memory", {"query": question.text, "limit": limit})
            query_s.append(perf_counter() - started)
            run.rankings[question.key] = _ranked_ids(found["results"], question.evidence, tally)
            carried.rankings[question.key] = _shown_turns(found["results"])[:limit]
        run.latencies_s.extend(query_s)
    logger.info(
        "%s: %d turns remembered in %.1f s, %d questions in %.1f s",
        conv.id,
        len(conv.turns),
        ingest_s,
        len(conv.questions),
        sum(query_s),
    )


def _protocol_error(exc: BaseException) -> MCPError | None:
    """The MCP error (a server that died, a closed pipe) inside whatever task groups wrapped it."""
    if isinstance(exc, MCPError):
        return exc
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _protocol_error(inner)
            if found is not None:
                return found
    return None


async def server_run(dataset: Dataset, options: EvalOptions) -> list[RetrieverRun]:
    """Every conversation through a fresh ``hybrid-memory serve`` over stdio; the rankings and timings.

    Two runs of the same answers: the hits as ranked, and the turns shown (``CARRIED_RUN``).
    """
    run = RetrieverRun(name=SERVER_RUN, ingest_s=0.0)
    carried = RetrieverRun(name=CARRIED_RUN)
    tally = _Tally()
    with tempfile.TemporaryDirectory(prefix="hybrid-memory-locomo-") as tmp:
        for conv in dataset.conversations:
            try:
                data_dir = Path(tmp) / conv.id if options.separate_stores else Path(tmp)
                await _run_conversation(
                    conv, data_dir, options.embedding.model_path, options.limit, (run, carried), tally
                )
            except Exception as exc:
                lost = _protocol_error(exc)
                if lost is None:
                    raise
                raise EvaluationError(
                    f"{conv.id}: the server stopped answering ({lost}); its own error is printed above"
                ) from exc
    run.details = {
        "transport": "stdio",
        "limit": options.limit,
        "separate_stores": options.separate_stores,
        "ingest": dict(tally.ingest),
        "results": dict(tally.results),
        "messages_without_message_id": tally.results["message without message_id"],
        "evidence_hits_at_10_by_channels": dict(tally.evidence_channels.most_common()),
        "start_up_s": {
            "per_server_mean": sum(tally.warm_up_s) / max(1, len(tally.warm_up_s)),
            "total": sum(tally.warm_up_s),
        },
    }
    carried.latencies_s = run.latencies_s
    return [run, carried]


async def evaluate_locomo(
    path: Path, options: EvalOptions, *, conversations: int | None = None
) -> dict[str, Any]:
    """The whole benchmark: the server over stdio, then the baselines in this process; the report."""
    dataset = load_locomo(path, conversations=conversations, half=options.half)
    logger.info(
        "LoCoMo: %d conversations, %d questions; evidence repair: %s",
        len(dataset.conversations),
        len(dataset.questions),
        {k: v for k, v in dataset.repair.as_dict().items() if k != "examples"},
    )
    runs = await server_run(dataset, options)
    if options.baselines:
        from hybrid_memory.evaluation.baselines import baseline_runs, locomo_haystacks

        runs += await baseline_runs(locomo_haystacks(dataset), options.embedding, BASELINE_DEPTH)
    return build_report(dataset, runs, path=path, limit=options.limit)
