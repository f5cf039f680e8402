"""The LongMemEval dataset and its turn- and session-level retrieval metrics.

LongMemEval (Wu et al., ICLR 2025) asks one question of one *haystack*: about fifty
dated user-assistant chat sessions, ~500 turns. The turns that hold the evidence carry
``has_answer: true``; ``answer_session_ids`` names their sessions. Unlike LoCoMo's two
friends talking, the assistant's turns are long and the user's facts are stated in
passing, so the two benchmarks pull a ranker in different directions.

One item is one memory: its sessions are remembered (a thread per session, the session's
date on every message), then its question is asked. Each turn's message id is
``<session id>#<turn index>``, so the ranked message ids name turns and sessions directly.

Metrics, per question, over the ranked turn ids (each hit by its own turn only):

- ``T-R@k``: the share of the evidence turns among the first k;
- ``nDCG@10``: binary relevance over the evidence turns;
- ``MRR``: 1 / the rank of the first evidence turn (0 when none is ranked);
- ``S-any@5`` / ``S-all@10``: the sessions in order of their first ranked turn; 1 when
  any answer session is among the first 5 of them / all are among the first 10.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hybrid_memory.evaluation.locomo import DatasetError, ndcg_at_k, recall_at_k

TURN_KS = (5, 10, 20)
QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
_DATE_FORMAT = "%Y/%m/%d (%a) %H:%M"


@dataclass(frozen=True)
class Turn:
    id: str
    role: str
    content: str
    has_answer: bool = False


@dataclass(frozen=True)
class Session:
    id: str
    date: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True)
class Item:
    """One question with its own haystack."""

    id: str
    type: str
    question: str
    date: datetime
    sessions: tuple[Session, ...]
    answer_sessions: tuple[str, ...]

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]

    @property
    def evidence(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.turns if t.has_answer)


def session_of(turn_id: str) -> str:
    """The session id inside a turn id (``"<session id>#<turn index>"``)."""
    return turn_id.rpartition("#")[0]


def parse_date(value: str) -> datetime:
    """``"2023/03/27 (Mon) 00:49"`` as a timezone-aware UTC datetime (the dataset gives no zone)."""
    try:
        return datetime.strptime(value.strip(), _DATE_FORMAT).replace(tzinfo=UTC)
    except ValueError as exc:
        raise DatasetError(f"date {value!r} is not like '2023/03/27 (Mon) 00:49'") from exc


def _item(raw: Mapping[str, Any]) -> Item:
    sessions = []
    for sid, date, turns in zip(
        raw["haystack_session_ids"], raw["haystack_dates"], raw["haystack_sessions"], strict=True
    ):
        parsed = tuple(
            Turn(
                id=f"{sid}#{index}",
                role=str(t["role"]),
                content=str(t["content"]),
                has_answer=bool(t.get("has_answer")),
            )
            for index, t in enumerate(turns)
        )
        sessions.append(Session(id=str(sid), date=parse_date(str(date)), turns=parsed))
    return Item(
        id=str(raw["question_id"]),
        type=str(raw["question_type"]),
        question=str(raw["question"]),
        date=parse_date(str(raw["question_date"])),
        sessions=tuple(sessions),
        answer_sessions=tuple(str(s) for s in raw["answer_session_ids"]),
    )


def parse_longmemeval(data: Any) -> list[Item]:
    """The items of LongMemEval's JSON (a list), keeping only those with evidence turns to score."""
    if not isinstance(data, list):
        raise DatasetError("expected a JSON list of LongMemEval items (longmemeval_s.json)")
    items = []
    for position, raw in enumerate(data):
        try:
            item = _item(raw)
        except (KeyError, TypeError, ValueError) as exc:
            if isinstance(exc, DatasetError):
                raise DatasetError(f"item {position}: {exc}") from exc
            raise DatasetError(f"item {position}: missing or malformed field {exc}") from exc
        if item.evidence:
            items.append(item)
    return items


def load_longmemeval(path: Path, *, items: int | None = None, half: str | None = None) -> list[Item]:
    """Read a LongMemEval file (``.json`` or ``.json.gz``); ``items`` keeps the first N.

    ``half="tune"`` keeps the even-numbered items, ``"held-out"`` the odd ones.
    """
    try:
        opener = gzip.open if path.suffix == ".gz" else open
        with opener(path, "rt", encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError) as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from exc
    parsed = parse_longmemeval(data)
    if items is not None:
        parsed = parsed[:items]
    if half is not None:
        parsed = parsed[0 if half == "tune" else 1 :: 2]
    return parsed


def question_scores(ranked: Sequence[str], item: Item) -> dict[str, float]:
    """Every metric of one question over its ranked turn ids."""
    evidence = item.evidence
    scores = {f"T-R@{k}": recall_at_k(ranked, evidence, k) for k in TURN_KS}
    scores["nDCG@10"] = ndcg_at_k(ranked, evidence, 10)
    first = next((rank for rank, t in enumerate(ranked, 1) if t in set(evidence)), None)
    scores["MRR"] = 1.0 / first if first else 0.0
    scores["hit@1"] = 1.0 if first == 1 else 0.0
    sessions = list(dict.fromkeys(session_of(t) for t in ranked))
    wanted = set(item.answer_sessions)
    scores["S-any@5"] = 1.0 if wanted & set(sessions[:5]) else 0.0
    scores["S-all@10"] = 1.0 if wanted <= set(sessions[:10]) else 0.0
    return scores


def summarise(items: Sequence[Item], rankings: Mapping[str, Sequence[str]]) -> dict[str, dict[str, float]]:
    """Mean metrics per question type and ``"overall"``; a question with no ranking retrieved nothing."""
    per = {i.id: question_scores(rankings.get(i.id, ()), i) for i in items}
    out: dict[str, dict[str, float]] = {}
    for kind in (*QUESTION_TYPES, "overall"):
        rows = [per[i.id] for i in items if kind in ("overall", i.type)]
        if rows:
            out[kind] = {name: sum(r[name] for r in rows) / len(rows) for name in rows[0]}
            out[kind]["n"] = len(rows)
    return out
