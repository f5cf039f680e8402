"""Questions about things never stored: each question asked of another memory, beside its own.

    python bench/nothing_relevant.py [--locomo-store DIR] [--lme-store DIR] [--out FILE.json]

Uses the stores recall_ablation.py and longmemeval_ablation.py built (same model, same
ingest). LoCoMo: every question of categories 1-4 of conversation i is asked of its own
memory and of conversation i+1's (whose people and events it never mentions); LongMemEval:
item i's question of its own haystack and of item i+1's. Prints, per threshold on
``match``, the share of foreign questions that get no hit at or above it
and, on its own memory, the share of questions whose first five hits hold an evidence turn
at or above it beside hit@5 with every hit counted.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import anyio

sys.path.insert(0, str(Path(__file__).resolve().parent))

from embedding_cache import CachingEmbedder
from hybrid_memory.backends import open_graph_store, open_vector_store
from hybrid_memory.embeddings import build_embedder
from hybrid_memory.evaluation.locomo import load_locomo
from hybrid_memory.evaluation.longmemeval import load_longmemeval
from hybrid_memory.models import RecallResult, Scope
from hybrid_memory.service.recall import Recaller, RecallOptions, state
from hybrid_memory.service.stores import Stores
from hybrid_memory.settings import load_settings
from longmemeval_ablation import DEFAULT_DATASET as LME_DATASET
from longmemeval_ablation import spread
from recall_ablation import DEFAULT_DATASET as LOCOMO_DATASET

_last_state: list[state.RecallState] = []
_render = state.render


def _keep(s: state.RecallState) -> RecallResult:
    _last_state.append(s)
    return _render(s)


state.render = _keep  # the pipeline calls state.render: keep each query's state for its raw scores

THRESHOLDS = (0.2, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7)
LIMIT = 5


async def ask(
    store: Path, project: str, questions: Sequence[tuple[str, str, Sequence[str]]], cache: Path
) -> list[dict[str, Any]]:
    """Each (key, question, evidence) asked of ``project``'s memory: its hits' ids and matches."""
    settings = load_settings(
        data_dir=store / project, project=project, vector_backend="edge", graph_backend="sqlite"
    )
    embedder = CachingEmbedder(build_embedder(settings.embedding), cache)
    rows = []
    try:
        async with (
            open_vector_store(settings, dimension=embedder.dimension, model=embedder.model_name) as vectors,
            open_graph_store(settings) as graph,
        ):
            recaller = Recaller(settings=settings, stores=Stores.over(vectors, graph, embedder))
            for key, question, evidence in questions:
                found = await recaller.recall(Scope(project=project), question, RecallOptions(limit=LIMIT))
                rows.append(
                    {
                        "key": key,
                        "hits": [h.message_id for h in found.results],
                        "matches": [h.match for h in found.results],
                        # The raw channel scores, to try other calibrations without asking again.
                        "scores": [r.scores for r in _last_state[-1].ranked[:LIMIT]],
                        "evidence": list(evidence),
                    }
                )
                _last_state.clear()
    finally:
        await embedder.close()
    return rows


def table(name: str, own: list[dict[str, Any]], foreign: list[dict[str, Any]]) -> list[str]:
    hit5 = sum(1 for r in own if set(r["hits"]) & set(r["evidence"])) / len(own)
    lines = [
        f"{name}: {len(own)} questions of their own memory (hit@5 {hit5:.3f}), {len(foreign)} of another's",
        "| match at least | foreign: none as strong | own: evidence in top 5, as strong "
        "| own: any as strong |",
        "|---|---|---|---|",
    ]
    for t in THRESHOLDS:
        clean = sum(1 for r in foreign if not any(m >= t for m in r["matches"])) / len(foreign)
        strong = sum(
            1
            for r in own
            if any(h in r["evidence"] and m >= t for h, m in zip(r["hits"], r["matches"], strict=True))
        ) / len(own)
        anything = sum(1 for r in own if any(m >= t for m in r["matches"])) / len(own)
        lines.append(f"| {t:.2f} | {clean:.3f} | {strong:.3f} | {anything:.3f} |")
    return lines


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--locomo-store", type=Path, default=Path("/tmp/hm-locomo/base"))
    parser.add_argument("--locomo-cache", type=Path, default=Path("/tmp/hm-locomo/vectors.sqlite"))
    parser.add_argument("--lme-store", type=Path, default=Path("/tmp/hm-lme/base"))
    parser.add_argument("--lme-cache", type=Path, default=Path("/tmp/hm-lme/vectors.sqlite"))
    parser.add_argument(
        "--lme-items", type=int, help="only the first N items (in recall_ablation's spread order)"
    )
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    out: dict[str, Any] = {}
    dataset = load_locomo(LOCOMO_DATASET)
    convs = dataset.conversations
    own: list[dict[str, Any]] = []
    foreign: list[dict[str, Any]] = []
    for i, conv in enumerate(convs):
        qs = [(q.key, q.text, q.evidence) for q in conv.questions if q.category in (1, 2, 3, 4)]
        own += await ask(args.locomo_store, conv.id, qs, args.locomo_cache)
        foreign += await ask(args.locomo_store, convs[(i + 1) % len(convs)].id, qs, args.locomo_cache)
        print(f"{conv.id} done", file=sys.stderr, flush=True)
    out["locomo"] = {"own": own, "foreign": foreign}
    items = spread(load_longmemeval(LME_DATASET))[: args.lme_items]
    lme_own: list[dict[str, Any]] = []
    lme_foreign: list[dict[str, Any]] = []
    for i, item in enumerate(items):
        q = [(item.id, item.question, item.evidence)]
        lme_own += await ask(args.lme_store, item.id, q, args.lme_cache)
        lme_foreign += await ask(args.lme_store, items[(i + 1) % len(items)].id, q, args.lme_cache)
    out["longmemeval"] = {"own": lme_own, "foreign": lme_foreign}
    print("\n".join(table("LoCoMo 1-4", own, foreign)))
    print()
    print("\n".join(table("LongMemEval dev", lme_own, lme_foreign)))
    if args.out:
        args.out.write_text(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
