"""The LoCoMo dataset and the retrieval metrics it is scored with.

LoCoMo (Maharana et al., 2024) holds long two-person conversations split into
dated sessions of turns, and questions whose ``evidence`` names the turns
(``dia_id`` such as ``"D3:7"``: session 3, turn 7) that hold the answer.

The evidence ids in the public file need light repair: several ids in one
string (``"D8:6; D9:17"``), a stray colon (``"D:11:26"``), a zero-padded turn
(``"D30:05"``), a bare ``"D"``, and ids of turns that do not exist.
:func:`repair_evidence` fixes what can be fixed, drops the rest, and counts
every action in a :class:`RepairLog`, so a report says exactly what was scored.

Categories, as numbered in the dataset: 1 multi-hop, 2 temporal, 3 open-domain,
4 single-hop, 5 adversarial (questions about things that never happened; scored
separately, never in the overall figure).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hybrid_memory.errors import HybridMemoryError

CATEGORY_NAMES: Mapping[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
SCORED_CATEGORIES = (1, 2, 3, 4)
ADVERSARIAL = 5
RECALL_KS = (1, 5, 10, 20)
NDCG_K = 10

_SESSION_KEY = re.compile(r"session_(\d+)")
_DIA_ID = re.compile(r"D:?(\d+):(\d+)")
_SEPARATORS = re.compile(r"[;,\s]+")
_DATE_FORMAT = "%I:%M %p on %d %B, %Y"


class DatasetError(HybridMemoryError, ValueError):
    """The file cannot be read or is not LoCoMo-shaped; the message says where."""


@dataclass(frozen=True)
class Turn:
    dia_id: str
    speaker: str
    text: str
    image_caption: str | None = None

    @property
    def content(self) -> str:
        """What is remembered and searched: ``"<speaker>: <text>"`` plus the image caption."""
        base = f"{self.speaker}: {self.text}"
        return f"{base} [image: {self.image_caption}]" if self.image_caption else base


@dataclass(frozen=True)
class Session:
    number: int
    date: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Question:
    conversation_id: str
    index: int
    """Position in the conversation's ``qa`` list: with the conversation id, a stable key."""
    text: str
    category: int
    evidence: tuple[str, ...]

    @property
    def key(self) -> str:
        return f"{self.conversation_id}#{self.index}"


@dataclass(frozen=True)
class Conversation:
    id: str
    speaker_a: str
    speaker_b: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]


@dataclass
class RepairLog:
    """What :func:`repair_evidence` did to the evidence ids, counted over the whole file."""

    split_entries: int = 0
    """Strings holding several ids (``"D8:6; D9:17"``), split into them."""
    normalised_ids: int = 0
    """Ids rewritten to the ``D<session>:<turn>`` form (``"D:11:26"``, ``"D30:05"``)."""
    dropped_unparseable: int = 0
    """Entries that name no turn at all (``"D"``)."""
    dropped_unknown: int = 0
    """Well-formed ids of turns the conversation does not have."""
    duplicates_removed: int = 0
    questions_dropped: int = 0
    """Questions left with no evidence (never scorable), by any cause."""
    examples: list[str] = field(default_factory=list)
    """One line per repair: ``conv-43#12: 'D:11:26' -> 'D11:26'``."""

    def as_dict(self) -> dict[str, Any]:
        return {
            "split_entries": self.split_entries,
            "normalised_ids": self.normalised_ids,
            "dropped_unparseable": self.dropped_unparseable,
            "dropped_unknown": self.dropped_unknown,
            "duplicates_removed": self.duplicates_removed,
            "questions_dropped": self.questions_dropped,
            "examples": list(self.examples),
        }


@dataclass
class RetrieverRun:
    """What one retriever returned for every question, and how long it took."""

    name: str
    rankings: dict[str, list[str]] = field(default_factory=dict)
    """Question key -> turn ids, best first."""
    latencies_s: list[float] = field(default_factory=list)
    """Seconds per query, as the caller saw them."""
    ingest_s: float | None = None
    """Seconds spent indexing every turn."""
    details: dict[str, Any] = field(default_factory=dict)
    """Retriever-specific facts worth reporting (start-up time, missing ids, channels)."""


@dataclass(frozen=True)
class Dataset:
    conversations: tuple[Conversation, ...]
    repair: RepairLog

    @property
    def questions(self) -> list[Question]:
        return [q for c in self.conversations for q in c.questions]


def parse_session_date(value: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as a timezone-aware UTC datetime (LoCoMo gives no zone)."""
    try:
        parsed = datetime.strptime(value.strip(), _DATE_FORMAT)
    except ValueError as exc:
        raise DatasetError(f"session date {value!r} is not like '1:56 pm on 8 May, 2023'") from exc
    return parsed.replace(tzinfo=UTC)


def repair_evidence(
    raw: Iterable[str], known: Collection[str], log: RepairLog, where: str
) -> tuple[str, ...]:
    """The evidence ids of one question, repaired against the turn ids ``known`` to exist.

    Order is kept and duplicates removed; every change is counted in ``log``.
    """
    out: list[str] = []
    for entry in raw:
        parts = [p for p in _SEPARATORS.split(str(entry).strip()) if p]
        if len(parts) > 1:
            log.split_entries += 1
            log.examples.append(f"{where}: {entry!r} -> split into {parts}")
        if not parts:
            log.dropped_unparseable += 1
            log.examples.append(f"{where}: {entry!r} -> dropped (empty)")
        for part in parts:
            match = _DIA_ID.fullmatch(part)
            if match is None:
                log.dropped_unparseable += 1
                log.examples.append(f"{where}: {part!r} -> dropped (not an id)")
                continue
            dia_id = f"D{int(match[1])}:{int(match[2])}"
            if dia_id != part:
                log.normalised_ids += 1
                log.examples.append(f"{where}: {part!r} -> {dia_id!r}")
            if dia_id not in known:
                log.dropped_unknown += 1
                log.examples.append(f"{where}: {dia_id!r} -> dropped (no such turn)")
                continue
            if dia_id in out:
                log.duplicates_removed += 1
                log.examples.append(f"{where}: {dia_id!r} -> dropped (listed twice)")
                continue
            out.append(dia_id)
    return tuple(out)


def _sessions(conv_id: str, raw: Mapping[str, Any]) -> tuple[Session, ...]:
    sessions = []
    for key, turns in raw.items():
        match = _SESSION_KEY.fullmatch(key)
        # Some conversations list dates of sessions that hold no turns: nothing to remember.
        if match is None or not isinstance(turns, list) or not turns:
            continue
        number = int(match[1])
        date_key = f"session_{number}_date_time"
        if date_key not in raw:
            raise DatasetError(f"{conv_id}: {key} has no {date_key}")
        parsed = tuple(
            Turn(
                dia_id=str(t["dia_id"]),
                speaker=str(t["speaker"]),
                text=str(t["text"]),
                image_caption=str(t["blip_caption"]) if t.get("blip_caption") else None,
            )
            for t in turns
        )
        sessions.append(Session(number=number, date=parse_session_date(str(raw[date_key])), turns=parsed))
    sessions.sort(key=lambda s: s.number)
    return tuple(sessions)


def parse_locomo(data: Any) -> Dataset:
    """Conversations and repaired questions from LoCoMo's JSON (a list of samples)."""
    if not isinstance(data, list):
        raise DatasetError("expected a JSON list of conversations (locomo10.json)")
    log = RepairLog()
    conversations = []
    for position, sample in enumerate(data):
        try:
            conv_id = str(sample["sample_id"])
            raw = sample["conversation"]
            sessions = _sessions(conv_id, raw)
            known = {t.dia_id for s in sessions for t in s.turns}
            questions = []
            for index, qa in enumerate(sample["qa"]):
                evidence = repair_evidence(qa.get("evidence") or [], known, log, f"{conv_id}#{index}")
                if not evidence:
                    log.questions_dropped += 1
                    log.examples.append(f"{conv_id}#{index}: no evidence left -> question dropped")
                    continue
                questions.append(
                    Question(
                        conversation_id=conv_id,
                        index=index,
                        text=str(qa["question"]),
                        category=int(qa["category"]),
                        evidence=evidence,
                    )
                )
            conversations.append(
                Conversation(
                    id=conv_id,
                    speaker_a=str(raw["speaker_a"]),
                    speaker_b=str(raw["speaker_b"]),
                    sessions=sessions,
                    questions=tuple(questions),
                )
            )
        except (KeyError, TypeError) as exc:
            raise DatasetError(f"conversation {position}: missing or malformed field {exc}") from exc
    return Dataset(conversations=tuple(conversations), repair=log)


def load_locomo(path: Path, *, conversations: int | None = None, half: str | None = None) -> Dataset:
    """Read and repair ``locomo10.json``; ``conversations`` keeps only the first N.

    ``half="tune"`` keeps the even-numbered conversations (0, 2, ...), ``"held-out"``
    the odd ones: rankers are tuned on one and reported on the other.
    """
    try:
        with path.open(encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc
    if conversations is not None and isinstance(data, list):
        data = data[:conversations]
    if half is not None and isinstance(data, list):
        data = data[0 if half == "tune" else 1 :: 2]
    return parse_locomo(data)


# --- metrics ---------------------------------------------------------------------------


def recall_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Share of the relevant ids found in the top ``k``."""
    if not relevant:
        raise ValueError("recall is undefined without relevant ids")
    return len(set(ranked[:k]) & set(relevant)) / len(set(relevant))


def hit_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """1.0 when any relevant id is in the top ``k``, else 0.0."""
    return 1.0 if set(ranked[:k]) & set(relevant) else 0.0


def ndcg_at_k(ranked: Sequence[str], relevant: Collection[str], k: int) -> float:
    """Binary-relevance nDCG: gains ``1/log2(rank+1)``, over the best possible ordering."""
    wanted = set(relevant)
    if not wanted:
        raise ValueError("nDCG is undefined without relevant ids")
    seen: set[str] = set()
    dcg = 0.0
    for rank, item in enumerate(ranked[:k], start=1):
        if item in wanted and item not in seen:
            dcg += 1.0 / math.log2(rank + 1)
        seen.add(item)
    ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(len(wanted), k) + 1))
    return dcg / ideal


def question_scores(ranked: Sequence[str], relevant: Collection[str]) -> dict[str, float]:
    """Every metric of one question: ``R@k`` and ``hit@k`` for each k, and ``nDCG@10``."""
    scores = {f"R@{k}": recall_at_k(ranked, relevant, k) for k in RECALL_KS}
    scores.update({f"hit@{k}": hit_at_k(ranked, relevant, k) for k in RECALL_KS})
    scores[f"nDCG@{NDCG_K}"] = ndcg_at_k(ranked, relevant, NDCG_K)
    return scores


def _mean_scores(rows: Sequence[Mapping[str, float]]) -> dict[str, float]:
    if not rows:
        return {"n": 0}
    summary = {name: sum(r[name] for r in rows) / len(rows) for name in rows[0]}
    summary["n"] = len(rows)
    return summary


def summarise(
    questions: Sequence[Question], rankings: Mapping[str, Sequence[str]]
) -> dict[str, dict[str, float]]:
    """Mean metrics per category (``"1"``..``"5"``) and ``"overall"`` (categories 1-4 only).

    A question with no ranking counts as retrieving nothing.
    """
    per_question = {q.key: question_scores(rankings.get(q.key, ()), q.evidence) for q in questions}
    out: dict[str, dict[str, float]] = {}
    for category in (*SCORED_CATEGORIES, ADVERSARIAL):
        out[str(category)] = _mean_scores([per_question[q.key] for q in questions if q.category == category])
    out["overall"] = _mean_scores([per_question[q.key] for q in questions if q.category in SCORED_CATEGORIES])
    return out


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) with linear interpolation between closest ranks."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"q must be in [0, 100], got {q}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def latency_summary(seconds: Sequence[float]) -> dict[str, float]:
    """p50 / p95 / mean in milliseconds, and the count."""
    if not seconds:
        return {"n": 0}
    return {
        "n": len(seconds),
        "p50_ms": percentile(seconds, 50) * 1000,
        "p95_ms": percentile(seconds, 95) * 1000,
        "mean_ms": sum(seconds) / len(seconds) * 1000,
    }
