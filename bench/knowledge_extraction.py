"""How well the statement finder draws notes from what people said: recall, precision, by kind and language.

    python bench/knowledge_extraction.py DEV.jsonl [--fixtures FILE.jsonl ...] [--out FILE.json]

Each file holds labelled sessions (``hybrid_memory.service.knowledge.statements.labelled``): user turns,
the assistant's turn before each, and the statements a later session should know. The finder
runs on each session's turns three ways — the cues alone, the classifier alone, both (the
default) — and its notes are compared with the labels:

- **precision**: the share of notes drawn that say a labelled statement (of any confidence);
- **recall**: the share of labelled statements some note says, for all and for high confidence;
- by kind (a statement's labelled kind for recall, a note's kind for precision) and by language.

``DEV.jsonl`` is measured twice: with the shipped classifier (in-sample: it was trained on it)
and leave-one-project-out (each project scored by a classifier trained on the shipped sessions
and the other projects, with the shipped threshold). Fixtures are sessions the classifier never
saw. Prints the time per user turn (the candidate clauses embedded with the packaged int8
model, one thread), the finder's time against the cues alone on ``bench/plugin_hooks.py``'s
500-turn coding transcript, and the bytes the classifier ships.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.embeddings.fastembed_provider import FastEmbedEmbedder
from hybrid_memory.service.knowledge.statements import finder, training
from hybrid_memory.service.knowledge.statements.classifier import WEIGHTS, Classifier, shipped
from hybrid_memory.service.knowledge.statements.cues import Cue, Said, cues
from hybrid_memory.service.knowledge.statements.labelled import SHIPPED, Session, load, matches, said
from hybrid_memory.service.knowledge.statements.lexicon import language
from hybrid_memory.settings import PACKAGED_MODEL

sys.path.insert(0, str(Path(__file__).resolve().parent))
MODES: tuple[finder.Mode, ...] = ("cues", "classifier", "both")


class CachedEmbedder:
    """The packaged model, each text embedded once across modes and folds."""

    def __init__(self, inner: FastEmbedEmbedder) -> None:
        self.inner = inner
        self.cache: dict[str, list[float]] = {}

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def warm_up(self) -> None:
        await self.inner.warm_up()

    async def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, await self.inner.embed_documents(missing), strict=True))
        return [self.cache[t] for t in texts]

    async def embed_query(self, text: str) -> list[float]:
        return (await self.embed_documents([text]))[0]

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def token_spans(self, text: str) -> list[tuple[int, int]]:
        return self.inner.token_spans(text)

    async def close(self) -> None:
        await self.inner.close()


@dataclass
class Tally:
    notes: int = 0
    right: int = 0
    statements: int = 0
    found: int = 0
    high: int = 0
    high_found: int = 0

    def row(self) -> dict[str, Any]:
        return {
            "notes": self.notes,
            "precision": round(self.right / self.notes, 3) if self.notes else None,
            "recall": round(self.found / self.statements, 3) if self.statements else None,
            "high_recall": round(self.high_found / self.high, 3) if self.high else None,
            "statements": self.statements,
            "high": self.high,
        }


@dataclass
class Score:
    total: Tally = field(default_factory=Tally)
    kinds: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    languages: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    wrong: list[str] = field(default_factory=list)
    missed: list[str] = field(default_factory=list)

    def add(self, session: Session, notes: Sequence[Cue]) -> None:
        texts = [(n, n.said or n.content) for n in notes]
        for note, text in texts:
            ok = any(matches(text, s.text) for s in session.statements)
            for tally in (self.total, self.kinds[note.kind], self.languages[language(text)]):
                tally.notes += 1
                tally.right += ok
            if not ok:
                self.wrong.append(text[:120])
        for statement in session.statements:
            hit = any(matches(text, statement.text) for _, text in texts)
            high = statement.confidence == "high"
            for tally in (self.total, self.kinds[statement.kind], self.languages[language(statement.text)]):
                tally.statements += 1
                tally.found += hit
                tally.high += high
                tally.high_found += hit and high
            if high and not hit:
                self.missed.append(statement.text[:120])

    def report(self) -> dict[str, Any]:
        return {
            "all": self.total.row(),
            "by_kind": {k: t.row() for k, t in sorted(self.kinds.items())},
            "by_language": {k: t.row() for k, t in sorted(self.languages.items())},
            "wrong_notes": self.wrong,
            "missed_high": self.missed,
        }


async def score(
    sessions: Sequence[Session],
    embedder: Embedder,
    mode: finder.Mode,
    classifiers: dict[str, Classifier] | None = None,
) -> Score:
    """The finder's notes on ``sessions`` against their labels (``classifiers``: one per held-out project)."""
    result = Score()
    for session in sessions:
        model = (classifiers or {}).get(session.project)
        result.add(session, await finder.find(said(session), embedder, mode=mode, classifier=model))
    return result


async def held_out(sessions: Sequence[Session], embedder: Embedder) -> dict[str, Classifier]:
    """Per project of ``sessions``: a classifier trained on the shipped sessions and the other projects."""
    base = shipped()
    assert base is not None, "no shipped classifier: run scripts/train_statement_classifier.py"
    own = training.examples(load(SHIPPED))
    theirs = training.examples(sessions)
    x = await training.matrix(own + theirs, embedder)
    y = np.asarray([e.label for e in own + theirs])
    groups = np.asarray([""] * len(own) + [e.group for e in theirs])
    models: dict[str, Classifier] = {}
    for project in sorted({s.project for s in sessions}):
        keep = groups != project
        models[project] = replace(training.train(x[keep], y[keep], PACKAGED_MODEL), threshold=base.threshold)
    return models


def _line(name: str, tally: dict[str, Any]) -> str:
    def f(v: float | None) -> str:
        return "  -  " if v is None else f"{v:5.2f}"

    return (
        f"  {name:<22} notes {tally['notes']:>3}  P {f(tally['precision'])}  "
        f"R {f(tally['recall'])}  R(high) {f(tally['high_recall'])}  "
        f"({tally['statements']} statements, {tally['high']} high)"
    )


def show(title: str, report: dict[str, Any]) -> None:
    print(title)
    print(_line("all", report["all"]))
    for k, t in report["by_kind"].items():
        print(_line(f"kind {k}", t))
    for k, t in report["by_language"].items():
        print(_line(f"language {k}", t))


async def timing(sessions: Sequence[Session]) -> dict[str, float]:
    """The finder's time per user turn, the model loaded and nothing cached."""
    embedder = FastEmbedEmbedder(PACKAGED_MODEL, None, threads=1)
    await embedder.warm_up()
    turns = sum(len(s.turns) for s in sessions)
    embedded = sum(len(finder.candidates(said(s))) for s in sessions)
    started = time.perf_counter()
    for session in sessions:
        await finder.find(said(session), embedder, mode="both")
    both = time.perf_counter() - started
    started = time.perf_counter()
    for session in sessions:
        await finder.find(said(session), embedder, mode="cues")
    cues_only = time.perf_counter() - started
    await embedder.close()
    return {
        "user_turns": turns,
        "clauses_embedded": embedded,
        "ms_per_turn_both": round(1000 * both / turns, 2),
        "ms_per_turn_cues": round(1000 * cues_only / turns, 2),
    }


async def capture_cost(runs: int = 5) -> dict[str, float]:
    """The finder against the cues alone on plugin_hooks' 500-turn coding transcript: medians of ``runs``."""
    from plugin_hooks import _turns

    turns = [
        Said(f"{i}-{j}", role, text)
        for i in range(500)
        for j, (role, text) in enumerate(_turns(i, "bench", Path("/srv/app")))
        if isinstance(text, str)
    ]
    embedder = FastEmbedEmbedder(PACKAGED_MODEL, None, threads=1)
    await embedder.warm_up()
    times: dict[str, list[float]] = {"cues": [], "finder": []}
    for _ in range(runs):
        started = time.perf_counter()
        cues(turns)
        times["cues"].append(time.perf_counter() - started)
        started = time.perf_counter()
        await finder.find(turns, embedder)
        times["finder"].append(time.perf_counter() - started)
    await embedder.close()
    return {f"{name}_s": round(statistics.median(t), 3) for name, t in times.items()} | {
        "clauses_embedded": len([c for c in finder.candidates(turns) if not c.marks[-1]])
    }


async def main(args: argparse.Namespace) -> dict[str, Any]:
    embedder = CachedEmbedder(FastEmbedEmbedder(PACKAGED_MODEL, None, threads=1))
    dev = load(args.dev)
    results: dict[str, Any] = {}
    sets: list[tuple[str, list[Session], dict[str, Classifier] | None]] = [
        ("dev, shipped classifier (in-sample)", dev, None),
        ("dev, leave one project out", dev, await held_out(dev, embedder)),
        *((f"fixtures {path.name}", load(path), None) for path in args.fixtures),
    ]
    for title, sessions, models in sets:
        for mode in MODES:
            report = (await score(sessions, embedder, mode, models)).report()
            results[f"{title} | {mode}"] = report
            show(f"{title} | {mode}", report)
    results["time"] = await timing(dev)
    results["capture_500_turns"] = await capture_cost()
    results["bytes_shipped"] = {"weights": WEIGHTS.stat().st_size, "sessions": SHIPPED.stat().st_size}
    results["machine"] = {"platform": platform.platform(), "cpus": os.cpu_count(), "load": os.getloadavg()}
    shown = ("time", "capture_500_turns", "bytes_shipped", "machine")
    print(json.dumps({k: results[k] for k in shown}, indent=1))
    await embedder.close()
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dev", type=Path, help="labelled sessions (session-knowledge/dev.jsonl)")
    parser.add_argument("--fixtures", type=Path, action="append", default=[], help="more labelled sessions")
    parser.add_argument("--out", type=Path, help="write every figure, wrong note and miss as JSON")
    arguments = parser.parse_args()
    figures = asyncio.run(main(arguments))
    if arguments.out:
        arguments.out.write_text(json.dumps(figures, indent=1, ensure_ascii=False), encoding="utf-8")
        print(f"wrote {arguments.out}", file=sys.stderr)
