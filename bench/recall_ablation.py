"""Recall ablation on LoCoMo, in-process: each ranking mechanism on and off, tuning half beside held-out half.

    python bench/recall_ablation.py [PATH] [--store DIR] [--variants NAME ...] [--depth] [--out FILE.json]

Every conversation is remembered once (real model, Qdrant Edge, SQLite) into
``--store`` (kept between runs, so a second run only re-ranks), then every
question of categories 1-4 is asked through ``Recaller`` with each variant's
``RecallConfig`` (limit 20). The tuning half is the even-numbered conversations
(0, 2, 4, 6, 8 of locomo10.json), the held-out half the odd ones; weights were only
ever chosen by the tuning half. ``hybrid-memory eval locomo`` over MCP stdio stays
the number of record; this script is for comparing mechanisms quickly.

``--depth`` asks for the first 120 results instead (so each channel gives 480
candidates) and also prints the share of the evidence found in the first 1 ... 120:
how much of it any reordering of the candidates could bring into the first ten.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import anyio

from embedding_cache import CachingEmbedder
from hybrid_memory.backends import open_graph_store, open_vector_store
from hybrid_memory.embeddings import Embedder, build_embedder
from hybrid_memory.evaluation.locomo import Conversation, load_locomo
from hybrid_memory.evaluation.runner import session_messages
from hybrid_memory.models import MessageIn, Scope
from hybrid_memory.service import MemoryService, ThreadDraft, indexer
from hybrid_memory.service.recall import PRESETS, RecallConfig, Recaller, RecallOptions, recall_config
from hybrid_memory.service.recall.config import AdjacentConfig, ChannelConfig
from hybrid_memory.service.stores import Stores
from hybrid_memory.settings import load_settings

REPO = Path(__file__).resolve().parents[1]
DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "locomo" / "locomo10.json"
LIMIT = 20
DEPTHS = (1, 5, 10, 20, 50, 80, 120)
CATEGORIES = (1, 2, 3, 4)

Variant = Callable[[RecallConfig], RecallConfig]


def _set(**update: Any) -> Variant:
    def apply(config: RecallConfig) -> RecallConfig:
        return config.model_copy(update=update)

    return apply


def _preset(name: str, **update: Any) -> Variant:
    def apply(config: RecallConfig) -> RecallConfig:
        return PRESETS[name].model_copy(update={"timeout_s": config.timeout_s, **update})

    return apply


def _adjacent(share: float) -> AdjacentConfig:
    return AdjacentConfig(share=share, top=5)


_BEFORE = {"own_words_first": False}

VARIANTS: dict[str, Variant] = {
    "hybrid (min-max, before)": _set(**_BEFORE),
    "+ own words first": _set(own_words_first=True, answers_first=False),
    "+ answers first (default)": _set(own_words_first=True, answers_first=True),
    "adjacent carried, not ranked": _set(adjacent=_adjacent(0.0)),
    "adjacent ranked and carried": _set(),
    "carried, no dates": _set(dates=0.0),
    "carried, dates 0.15": _set(dates=0.15),
    "carried, dates 0.3 (default)": _set(dates=0.3),
    "adjacent carried, min 0.1": _set(adjacent=_adjacent(0.0)),
    "adjacent ranked, min 0.1": _set(adjacent=_adjacent(0.6)),
    "feedback 0.2, 3 docs": _set(feedback=0.2, feedback_docs=3),
    "feedback 0.4, 3 docs": _set(feedback=0.4, feedback_docs=3),
    "feedback 0.1, 3 docs": _set(feedback=0.1, feedback_docs=3),
    "feedback 0.05, 3 docs": _set(feedback=0.05, feedback_docs=3),
    "feedback 0.1, 2 docs": _set(feedback=0.1, feedback_docs=2),
    "feedback 0.1, 5 docs": _set(feedback=0.1, feedback_docs=5),
    "carried, feedback 0.1, 5 docs": _set(feedback=0.1, feedback_docs=5),
    "feedback 0.1, 8 docs": _set(feedback=0.1, feedback_docs=8),
    "feedback 0.1, 12 docs": _set(feedback=0.1, feedback_docs=12),
    "feedback 0.2, 5 docs": _set(feedback=0.2, feedback_docs=5),
    "feedback 0.2, 8 docs": _set(feedback=0.2, feedback_docs=8),
    "+ own-text channels weigh more": _set(
        **_BEFORE, keyword=ChannelConfig(weight=0.5), context=ChannelConfig(weight=0.2)
    ),
    "adjacent share 0.4": _set(**_BEFORE, adjacent=_adjacent(0.4)),
    "no adjacent": _set(**_BEFORE, adjacent=_adjacent(0.0)),
    "no context channel": _set(**_BEFORE, context=ChannelConfig(weight=0.0)),
    "calibrated": _preset("calibrated"),
    "calibrated - own words first": _preset("calibrated", own_words_first=False),
    "calibrated, adjacent 0.4": _preset("calibrated", adjacent=_adjacent(0.4)),
    "calibrated, questions 0.8": _preset("calibrated", question_factor=0.8),
    "+ questions 0.8": _set(**_BEFORE, question_factor=0.8),
    "own words first, own-text channels weigh more": _set(
        own_words_first=True, keyword=ChannelConfig(weight=0.5), context=ChannelConfig(weight=0.2)
    ),
    "own words first, adjacent top 10": _set(
        own_words_first=True, adjacent=AdjacentConfig(share=0.6, top=10)
    ),
    "calibrated, BM25 s/(s+8), cosine 0.35-0.65": _preset(
        "calibrated",
        keyword=ChannelConfig(weight=0.35, saturation=8.0),
        context=ChannelConfig(weight=0.35, saturation=8.0),
        dense=ChannelConfig(weight=0.3, floor=0.35, ceiling=0.65),
    ),
}


# Every mechanism on and off against today's default, for both benchmarks (bench/longmemeval_ablation.py).
VARIANTS.update(
    {
        "default": _set(),
        # What recall did before the speakers and outcomes rules (the default until they were measured).
        "before": _set(speakers=1.0, outcomes=False, pure_questions=False),
        "before, - own words first": _set(speakers=1.0, outcomes=False, own_words_first=False),
        "before, - answers first": _set(speakers=1.0, outcomes=False, answers_first=False),
        "before, - context channel": _set(speakers=1.0, outcomes=False, context=ChannelConfig(weight=0.0)),
        "before, - dates": _set(speakers=1.0, outcomes=False, dates=0.0),
        "before, + feedback 0.1": _set(speakers=1.0, outcomes=False, feedback=0.1),
        "- speakers": _set(speakers=1.0),
        "- named speakers": _set(named_speakers=False),
        "- outcomes": _set(outcomes=False),
        "- context channel (new)": _set(context=ChannelConfig(weight=0.0)),
        "- own words first (new)": _set(own_words_first=False),
        "- answers first (new)": _set(answers_first=False),
        "- dates (new)": _set(dates=0.0),
        "+ feedback 0.1 (new)": _set(feedback=0.1),
        "+ pure questions (new)": _set(pure_questions=True),
        "rrf (new)": _set(fusion="rrf"),
        "calibrated (new)": _set(fusion="calibrated"),
        "dense 0.45 (new)": _set(dense=ChannelConfig(weight=0.45, floor=0.3, ceiling=0.8)),
        "dense 0.15 (new)": _set(dense=ChannelConfig(weight=0.15, floor=0.3, ceiling=0.8)),
        "keyword 0.5, context 0.2 (new)": _set(
            keyword=ChannelConfig(weight=0.5, saturation=5.0),
            context=ChannelConfig(weight=0.2, saturation=5.0),
        ),
        **{f"speakers {f} (new)": _set(speakers=f) for f in (0.99, 0.8, 0.7, 0.6, 0.4, 0.3)},
        "- own words first": _set(own_words_first=False),
        "- answers first": _set(answers_first=False),
        "- own words first, - answers first": _set(own_words_first=False, answers_first=False),
        "answers first for pure questions": _set(pure_questions=True),
        "- context channel": _set(context=ChannelConfig(weight=0.0)),
        "- dates": _set(dates=0.0),
        "+ feedback 0.1": _set(feedback=0.1),
        "+ adjacent ranked 0.6": _set(adjacent=_adjacent(0.6)),
        "rrf": _set(fusion="rrf"),
        "calibrated": _preset("calibrated"),
        "keyword 0.5, context 0.2": _set(
            keyword=ChannelConfig(weight=0.5, saturation=5.0),
            context=ChannelConfig(weight=0.2, saturation=5.0),
        ),
        "dense 0.45": _set(dense=ChannelConfig(weight=0.45, floor=0.3, ceiling=0.8)),
        "dense 0.15": _set(dense=ChannelConfig(weight=0.15, floor=0.3, ceiling=0.8)),
        "+ outcomes": _set(outcomes=True),
        **{
            f"speakers {f}, outcomes": _set(speakers=f, outcomes=True)
            for f in (0.99, 0.9, 0.8, 0.7, 0.6, 0.5)
        },
        **{
            f"new {f}": _set(speakers=f, pure_questions=True, outcomes=True)
            for f in (1.0, 0.99, 0.9, 0.8, 0.7, 0.6, 0.5)
        },
        "new 0.8, - own words first": _set(
            speakers=0.8, pure_questions=True, outcomes=True, own_words_first=False
        ),
        "new 0.8, - context channel": _set(
            speakers=0.8, pure_questions=True, outcomes=True, context=ChannelConfig(weight=0.0)
        ),
        "new 0.8, - answers first": _set(
            speakers=0.8, pure_questions=True, outcomes=True, answers_first=False
        ),
        "new 0.8, + feedback 0.1": _set(speakers=0.8, pure_questions=True, outcomes=True, feedback=0.1),
        "new 0.8, dense 0.45": _set(
            speakers=0.8,
            pure_questions=True,
            outcomes=True,
            dense=ChannelConfig(weight=0.45, floor=0.3, ceiling=0.8),
        ),
        "new 0.8, keyword 0.5, context 0.2": _set(
            speakers=0.8,
            pure_questions=True,
            outcomes=True,
            keyword=ChannelConfig(weight=0.5, saturation=5.0),
            context=ChannelConfig(weight=0.2, saturation=5.0),
        ),
        "new 0.8, - dates": _set(speakers=0.8, pure_questions=True, outcomes=True, dates=0.0),
        "new 0.8, rrf": _set(speakers=0.8, pure_questions=True, outcomes=True, fusion="rrf"),
        "speakers 0.8, pure questions, outcomes": _set(speakers=0.8, pure_questions=True, outcomes=True),
        "speakers 0.7, pure questions, outcomes": _set(speakers=0.7, pure_questions=True, outcomes=True),
        **{f"speakers {f}": _set(speakers=f) for f in (0.9, 0.8, 0.7, 0.5)},
        **{
            f"speakers {f}, pure questions": _set(speakers=f, pure_questions=True)
            for f in (0.9, 0.8, 0.7, 0.5)
        },
    }
)


def depth(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    """The share of the evidence among the first k results, for each k of ``DEPTHS``."""
    wanted = set(evidence)
    return {f"R@{k}": len(wanted.intersection(ranked[:k])) / len(wanted) for k in DEPTHS}


def metrics(ranked: Sequence[str], evidence: Sequence[str]) -> dict[str, float]:
    wanted = set(evidence)
    first = next((r for r, i in enumerate(ranked, 1) if i in wanted), None)
    found = {i for i in ranked[:10] if i in wanted}
    dcg = sum(1 / math.log2(r + 1) for r, i in enumerate(ranked[:10], 1) if i in wanted)
    ideal = sum(1 / math.log2(r + 1) for r in range(1, min(len(wanted), 10) + 1))
    return {
        "R@10": len(found) / len(wanted),
        "hit@1": 1.0 if first == 1 else 0.0,
        "MRR": 1 / first if first else 0.0,
        "nDCG@10": dcg / ideal,
    }


def metrics_carried(groups: Sequence[Sequence[str]], evidence: Sequence[str]) -> dict[str, float]:
    """As ``metrics``, a hit counting as found when the evidence is the hit or a turn it carries."""
    wanted = set(evidence)
    first = next((r for r, g in enumerate(groups, 1) if wanted & set(g)), None)
    seen: set[str] = set()
    dcg = 0.0
    for r, g in enumerate(groups[:10], 1):
        new = (wanted & set(g)) - seen
        seen |= new
        dcg += len(new) / math.log2(r + 1)
    ideal = sum(1 / math.log2(r + 1) for r in range(1, min(len(wanted), 10) + 1))
    return {
        "R@10": len(seen) / len(wanted),
        "hit@1": 1.0 if first == 1 else 0.0,
        "MRR": 1 / first if first else 0.0,
        "nDCG@10": dcg / ideal,
    }


def _group(hit: Any) -> list[str]:
    around = [t.message_id or f"<{t.id}>" for t in (hit.context_before, hit.context_after) if t is not None]
    return [hit.message_id or f"<{hit.id}>", *around]


def mean(rows: Sequence[dict[str, float]]) -> dict[str, float]:
    return {k: round(sum(r[k] for r in rows) / len(rows), 4) for k in rows[0]} if rows else {}


async def ingest(service: MemoryService, conv: Conversation, scope: Scope) -> None:
    for session in conv.sessions:
        messages = [MessageIn.model_validate(m) for m in session_messages(conv, session)]
        await service.remember_thread(scope, ThreadDraft(f"session_{session.number}", messages))


async def run_conversation(
    conv: Conversation,
    store: Path,
    variants: dict[str, Variant],
    *,
    deep: bool = False,
    cache: Path | None = None,
) -> dict[str, list[dict[str, Any]]]:
    settings = load_settings(
        data_dir=store / conv.id, project=conv.id, vector_backend="edge", graph_backend="sqlite"
    )
    embedder: Embedder = build_embedder(settings.embedding)
    if cache is not None:
        embedder = CachingEmbedder(embedder, cache)
    scope = Scope(project=conv.id)
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name in variants}
    for name in variants:
        if "carried" in name:
            rows.update({f"{name} (context counts)": [], f"{name} (context as turns)": []})
    async with (
        open_vector_store(settings, dimension=embedder.dimension, model=embedder.model_name) as vectors,
        open_graph_store(settings) as graph,
    ):
        service = MemoryService(settings=settings, vectors=vectors, graph=graph, embedder=embedder)
        marker = store / conv.id / "ingested"
        if not marker.exists():
            await ingest(service, conv, scope)
            marker.write_text("ok")
        base = recall_config(settings.ranking, timeout_s=settings.backend_timeout_s)
        for name, variant in variants.items():
            stores = Stores.over(vectors, graph, embedder)
            recaller = Recaller(settings=settings, stores=stores, config=variant(base))
            for q in conv.questions:
                if q.category not in CATEGORIES:
                    continue
                carried = "carried" in name
                floor = 0.1 if "min 0.1" in name else 0.0
                limit = DEPTHS[-1] if deep else LIMIT
                options = RecallOptions(limit=limit, context=carried, min_score=floor)
                found = await recaller.recall(scope, q.text, options)
                ranked = [h.message_id or f"<{h.id}>" for h in found.results]
                scores = {**metrics(ranked, q.evidence), **(depth(ranked, q.evidence) if deep else {})}
                rows[name].append({"category": q.category, **scores})
                if carried:
                    groups = [_group(h) for h in found.results]
                    row = {"category": q.category, **metrics_carried(groups, q.evidence)}
                    rows[f"{name} (context counts)"].append(row)
                    turns = list(dict.fromkeys(i for g in groups for i in g))
                    rows[f"{name} (context as turns)"].append(
                        {"category": q.category, **metrics(turns, q.evidence)}
                    )
    return rows


def print_depth(report: dict[str, Any]) -> None:
    print()
    print("| variant | half | questions | " + " | ".join(f"R@{k}" for k in DEPTHS) + " |")
    print("|---|---|---|" + "---|" * len(DEPTHS))
    for name, halves in report.items():
        for half_name, m in halves.items():
            for label, part in (("1-4", m), ("multi-hop", m["multi-hop"]), ("open-domain", m["open-domain"])):
                if f"R@{DEPTHS[0]}" in part:
                    cells = " | ".join(f"{part[f'R@{k}']:.3f}" for k in DEPTHS)
                    print(f"| {name} | {half_name} | {label} | {cells} |")


async def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--store", type=Path, default=Path("/tmp/hybrid-memory-ablation"))
    parser.add_argument("--variants", nargs="*", default=list(VARIANTS), choices=list(VARIANTS))
    parser.add_argument("--only", choices=["tune", "held-out"], help="one half only")
    parser.add_argument("--conversations", type=int, metavar="N", help="only the first N conversations")
    parser.add_argument("--depth", action="store_true", help="rank 120 and report R@1 ... R@120")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--cache", type=Path, help="keep vectors by model and text in this SQLite file")
    parser.add_argument(
        "--own-vectors", action="store_true", help="ingest without the previous turn's tail in dense vectors"
    )
    args = parser.parse_args(argv)
    if args.own_vectors:
        indexer.CONTEXT_WEIGHT = 0.0
    dataset = load_locomo(args.path, conversations=args.conversations)
    variants = {name: VARIANTS[name] for name in args.variants}
    halves: dict[str, dict[str, list[dict[str, Any]]]] = {"tune": {}, "held-out": {}}
    for index, conv in enumerate(dataset.conversations):
        if args.only and args.only != ("tune" if index % 2 == 0 else "held-out"):
            continue
        per_variant = await run_conversation(conv, args.store, variants, deep=args.depth, cache=args.cache)
        half = halves["tune" if index % 2 == 0 else "held-out"]
        for name, found in per_variant.items():
            half.setdefault(name, []).extend(found)
        print(f"{conv.id} done", file=sys.stderr)
    report: dict[str, Any] = {}
    print("| variant | half | R@10 | hit@1 | MRR | nDCG@10 | multi-hop R@10 | open-domain R@10 |")
    print("|---|---|---|---|---|---|---|---|")
    for name in [
        shown for n in variants for shown in (n, f"{n} (context counts)", f"{n} (context as turns)")
    ]:
        for half_name, rows_all in (*halves.items(), ("all", None)):
            rows = (
                rows_all.get(name, [])
                if rows_all is not None
                else [r for part in halves.values() for r in part.get(name, [])]
            )
            if not rows:
                continue
            m = mean(rows)
            multi = mean([r for r in rows if r["category"] == 1])
            open_domain = mean([r for r in rows if r["category"] == 3])
            report.setdefault(name, {})[half_name] = {**m, "multi-hop": multi, "open-domain": open_domain}
            print(
                f"| {name} | {half_name} | {m['R@10']:.3f} | {m['hit@1']:.3f} | {m['MRR']:.3f} | "
                f"{m['nDCG@10']:.3f} | {multi['R@10']:.3f} | {open_domain['R@10']:.3f} |"
            )
    if args.depth:
        print_depth(report)
    if args.out:
        args.out.write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(anyio.run(main, sys.argv[1:]))
