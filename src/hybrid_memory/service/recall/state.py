"""The one object recall's stages read and write, and the pure stages over it.

``plan`` builds the state from the request; the I/O stages (``channels``, ``expand``)
fill ``channels``, ``memories`` and ``notes``; ``fuse``, ``rank`` and ``render`` are
pure and tested with literal inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path

from hybrid_memory.codestate import WorkTree
from hybrid_memory.models import (
    AdjacentTurn,
    Memory,
    MemoryFilter,
    MemoryKind,
    Note,
    NoteFilter,
    NoteType,
    RecallHit,
    RecallResult,
    Scope,
)
from hybrid_memory.service.recall import calibration, dates, outcomes, ranking, scoring, speakers
from hybrid_memory.service.recall.config import RecallConfig
from hybrid_memory.text.questions import ends_asking, only_asks


@dataclass(frozen=True)
class RecallOptions:
    thread_id: str | None = None
    limit: int = 5
    kinds: Sequence[MemoryKind] | None = None
    note_types: Sequence[NoteType] | None = None
    tags: Sequence[str] | None = None
    since: datetime | None = None
    until: datetime | None = None
    include_invalid: bool = False
    as_of: datetime | None = None
    """Answer as memory stood then: created at or before it, and valid then unless include_invalid."""
    min_score: float = 0.0
    """Leave out hits whose ``match`` (calibrated, the same scale in every query) is below this."""
    context: bool = True
    """Give each message hit the turns just before and after it (``context_before`` / ``context_after``)."""
    work_tree: Path | None = None
    """The caller's directory: a hit whose turn edited files says which of them changed since there."""


@dataclass
class RecallState:
    """One query on its way through the pipeline."""

    scope: Scope
    query: str
    options: RecallOptions
    now: datetime
    flt: MemoryFilter
    note_flt: NoteFilter
    candidates: int
    """How many hits each channel is asked for."""
    channels: dict[str, list[ranking.ChannelHit]] = field(default_factory=dict)
    memories: dict[str, Memory] = field(default_factory=dict)
    prefetched: dict[str, Memory] = field(default_factory=dict)
    """Memories of keyword candidates read while the query was embedded, for ``depth.read`` to take."""
    notes: dict[str, Note] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    fused: list[ranking.Fused] = field(default_factory=list)
    ranked: list[ranking.Ranked] = field(default_factory=list)
    successors: dict[str, str] = field(default_factory=dict)
    """Closed note id -> the note that superseded or contradicted it."""
    matches: dict[str, float] = field(default_factory=dict)
    """Shown hit id -> its ``match``."""
    strong_match: float = 0.0
    """The least ``match`` of a hit that is not marked weak."""
    query_terms: frozenset[int] = frozenset()
    """The query's keyword terms (BM25 indices), for each hit's share of them."""
    terms: Callable[[str], Sequence[int]] | None = None
    """A text's keyword terms, as the query's were made; None: ``match`` counts no words."""
    fusion: tuple[RecallConfig, list[list[ranking.ChannelHit]], list[ranking.Fused]] | None = None
    """What fusion under a configuration made of the channels' lists before any rule (``fuse``)."""
    ruled: tuple[object, dict[str, Memory], int, list[ranking.Fused]] | None = None
    """``fuse``'s last result with what it was made of (the fusion, the memories and their number):
    recall fuses in rounds, and a round that read nothing new need not apply the rules again."""

    @property
    def want_notes(self) -> bool:
        kinds = self.options.kinds
        return not kinds or MemoryKind.NOTE in kinds

    def is_note(self, item_id: str) -> bool:
        memory = self.memories.get(item_id)
        return item_id in self.notes or (memory is not None and memory.kind is MemoryKind.NOTE)


def plan(
    scope: Scope, query: str, options: RecallOptions, now: datetime, config: RecallConfig
) -> RecallState:
    """The filters and candidate count a request asks for."""
    flt = MemoryFilter(
        scope=scope,
        thread_id=options.thread_id,
        kinds=list(options.kinds) if options.kinds else None,
        note_types=list(options.note_types) if options.note_types else None,
        tags=list(options.tags) if options.tags else None,
        created_after=options.since,
        created_before=_before(options.until, options.as_of),
    )
    note_flt = NoteFilter(
        scope=scope,
        types=flt.note_types,
        tags=flt.tags,
        thread_id=options.thread_id,
        valid_at=None if options.include_invalid else now,
    )
    return RecallState(
        scope=scope,
        query=query,
        options=options,
        now=now,
        flt=flt,
        note_flt=note_flt,
        candidates=max(config.candidates, options.limit * 4),
        strong_match=config.strong_match,
    )


def fuse(state: RecallState, config: RecallConfig) -> None:
    """One relevance per candidate from what every channel returned, then the rules over their memories."""
    lists = list(state.channels.values())
    if not _same_fusion(state.fusion, config, lists):
        weights = config.channel_weights()
        if config.fusion == "rrf":
            fused = ranking.rrf(state.channels, k=config.rrf_k, weights=weights)
        elif config.fusion == "calibrated":
            fused = calibration.calibrated_fusion(state.channels, weights, config.calibrations())
        else:
            fused = ranking.score_fusion(state.channels, weights)
        state.fusion = (config, lists, fused)
    assert state.fusion is not None
    last = state.ruled
    if (
        last is not None
        and last[0] is state.fusion
        and last[1] is state.memories
        and last[2] == len(state.memories)
    ):
        state.fused = list(last[3])
        return
    state.fused = list(state.fusion[2])
    _rules(state, config)
    state.ruled = (state.fusion, state.memories, len(state.memories), list(state.fused))


def _rules(state: RecallState, config: RecallConfig) -> None:
    """The rules over the candidates' memories, each after fusion in turn (``fuse``)."""
    asking = _questions(state) if config.question_factor < 1.0 or config.answers_first else {}
    if config.question_factor < 1.0:
        state.fused = ranking.yield_questions(state.fused, asking, factor=config.question_factor)
    questions: dict[str, Memory] = asking if config.answers_first else {}
    if questions and config.pure_questions:  # the turns that ask and state nothing
        questions = {i: m for i, m in questions.items() if only_asks(m.text)}
    if config.own_words_first:
        prev_of = {
            i: p for i, m in state.memories.items() if (p := m.prev_id) is not None and p not in questions
        }
        state.fused = ranking.own_words_first(state.fused, prev_of)
    if questions:
        after = {m.next_id: q for q, m in questions.items() if m.next_id is not None}
        state.fused = ranking.answers_first(state.fused, after)
    if config.outcomes and outcomes.asks_outcome(state.query):
        threads = {
            i: m.thread_id for i, m in state.memories.items() if m.kind is MemoryKind.MESSAGE and m.thread_id
        }
        state.fused = outcomes.last_word_first(
            state.fused, threads, lambda b, a: _after(state.memories, b, a)
        )
    speaker = speakers.asks_about(state.query) if config.speakers < 1.0 else None
    if speaker is not None:
        roles = {i: m.role for i, m in state.memories.items() if m.kind is MemoryKind.MESSAGE}
        state.fused = speakers.prefer(state.fused, roles, speaker, config.speakers)
        if speaker == speakers.USER:
            # What the user said takes the place of the reply that echoes it (answers first, reversed).
            state.fused = ranking.answers_first(state.fused, speakers.replies_to(state.memories, speaker))
    elif config.named_speakers and config.speakers < 1.0:
        authors = {
            i: speakers.author(m.text) for i, m in state.memories.items() if m.kind is MemoryKind.MESSAGE
        }
        name = speakers.named_author(state.query, authors.values())
        if name is not None:
            state.fused = speakers.prefer_author(state.fused, authors, name, config.speakers)
    named = dates.periods(state.query) if config.dates > 0 else []
    if named:
        inside = {i for i, m in state.memories.items() if any(p.contains(m.created_at) for p in named)}
        state.fused = dates.lift(state.fused, inside, config.dates)


def _same_fusion(
    made: tuple[RecallConfig, list[list[ranking.ChannelHit]], list[ranking.Fused]] | None,
    config: RecallConfig,
    lists: list[list[ranking.ChannelHit]],
) -> bool:
    """Whether ``made`` fused these very lists under this very configuration (recall fuses in rounds)."""
    return (
        made is not None
        and made[0] is config
        and len(made[1]) == len(lists)
        and all(a is b for a, b in zip(made[1], lists, strict=True))
    )


CHAIN_STEPS = 12
"""How far along a thread's chain of loaded turns ``_after`` looks for a later turn."""


def _after(memories: dict[str, Memory], later: str, earlier: str) -> bool:
    """Whether turn ``later`` comes after ``earlier`` in their thread: by time, else by the chain of turns."""
    b, a = memories[later], memories[earlier]
    if b.created_at != a.created_at:  # a session remembered with one date has one time for every turn
        return b.created_at > a.created_at
    current: Memory | None = a
    for _ in range(CHAIN_STEPS):
        if current is None or current.next_id is None:
            return False
        if current.next_id == later:
            return True
        current = memories.get(current.next_id)
    return False


def _questions(state: RecallState) -> dict[str, Memory]:
    """The candidates that are turns asking a question, by id."""
    return {i: m for i, m in state.memories.items() if _asks(m)}


def rank(state: RecallState, config: RecallConfig) -> None:
    """Admissible candidates with their memory, mixed with recency and importance, one per message.

    Only the first ``limit`` of ``state.ranked`` are exact (every stage reads no further): the
    candidates are scored best relevance first, and those left once none of them can reach the
    ``limit``-th message's score are not scored at all (``_scored``).
    """
    memories = state.memories
    candidates = [
        f for f in state.fused if f.id in memories and admissible(memories[f.id], state.now, state.options)
    ]
    ranked = _scored(state, config, candidates)
    closed = {r.id for r in ranked if not _valid(memories[r.id], state.now)}
    if closed:
        ranked = ranking.history_last(ranked, closed)
    state.ranked = ranking.dedupe_by(ranked, key=lambda i: _group_key(memories[i]))
    shown = state.ranked[: state.options.limit]
    state.matches = {r.id: match(state, r.id, r.scores, config) for r in shown}


def _scored(
    state: RecallState, config: RecallConfig, candidates: list[ranking.Fused]
) -> list[ranking.Ranked]:
    """The final scores of the candidates that may reach the first ``limit`` messages, best first."""
    memories = state.memories
    floor = state.options.min_score

    def scored(part: list[ranking.Fused]) -> list[ranking.Ranked]:
        if floor > 0:  # a match is never below 0: under no floor, only the hits shown need theirs
            part = [f for f in part if match(state, f.id, f.scores, config) >= floor]
        return ranking.final_scores(
            part,
            created_at=lambda i: memories[i].created_at,
            importance=lambda i: memories[i].importance,
            now=state.now,
            weights=config.final,
        )

    if state.options.include_invalid:  # closed memories go last whatever their score: score every one
        return scored(candidates)
    return scoring.best_scores(
        candidates,
        scored,
        limit=state.options.limit,
        group=lambda i: _group_key(memories[i]),
        top_importance=max([1.0, *(i for f in candidates if (i := memories[f.id].importance) is not None)]),
        weights=config.final,
    )


def match(state: RecallState, item_id: str, scores: dict[str, float], config: RecallConfig) -> float:
    """``match_strength`` of a candidate's own text: its share of the query's terms and its cosine."""
    text = state.memories[item_id].text
    coverage = calibration.term_coverage(state.query_terms, state.terms(text)) if state.terms else 0.0
    return calibration.match_strength(
        coverage, scores.get("dense"), config.dense.calibration if config.dense.enabled else None
    )


CONTEXT_CHARS = 240
"""How much of a neighbouring turn a hit carries: enough to read the exchange, not the whole turn."""


def render(state: RecallState) -> RecallResult:
    results = []
    tree: WorkTree | None = None
    for r in state.ranked[: state.options.limit]:
        memory = state.memories[r.id]
        hit = _hit(memory, r, state.successors.get(r.id))
        if memory.code is not None:
            tree = tree or WorkTree(state.options.work_tree)
            hit.changed = tree.changed(memory.code.files)
            hit.branch = tree.other_branch(memory.code.branch)
        hit.match = round(state.matches.get(r.id, 0.0), 6)
        hit.weak = hit.match < state.strong_match
        if state.options.context:
            hit.context_before = _turn(state.memories.get(memory.prev_id or ""))
            hit.context_after = _turn(state.memories.get(memory.next_id or ""))
        results.append(hit)
    return RecallResult(query=state.query, results=results, skipped_channels=state.skipped)


def context_ids(state: RecallState) -> list[str]:
    """The turns around the message hits about to be returned, when the request wants them."""
    if not state.options.context:
        return []
    shown = (state.memories[r.id] for r in state.ranked[: state.options.limit])
    return [i for m in shown if m.kind is MemoryKind.MESSAGE for i in (m.prev_id, m.next_id) if i is not None]


def _turn(memory: Memory | None) -> AdjacentTurn | None:
    if memory is None:
        return None
    text = memory.text if len(memory.text) <= CONTEXT_CHARS else memory.text[: CONTEXT_CHARS - 1] + "…"
    return AdjacentTurn(id=memory.id, message_id=memory.message_id, role=memory.role, text=text)


def admissible(memory: Memory, now: datetime, options: RecallOptions) -> bool:
    """Whether a memory may be returned: created and valid at ``now`` unless the options say otherwise."""
    if options.as_of is not None and (
        memory.created_at > options.as_of
        or (not options.include_invalid and memory.valid_from is not None and memory.valid_from > now)
    ):
        return False
    return options.include_invalid or _valid(memory, now)


def _valid(memory: Memory, now: datetime) -> bool:
    return memory.valid_to is None or memory.valid_to > now


def _asks(memory: Memory) -> bool:
    return memory.kind is MemoryKind.MESSAGE and text_asks(memory.text)


@lru_cache(maxsize=speakers.TEXTS_KEPT)
def text_asks(text: str) -> bool:
    """``ends_asking``, kept for the texts seen lately: an agent's recalls keep meeting the same turns."""
    return ends_asking(text)


def _before(until: datetime | None, as_of: datetime | None) -> datetime | None:
    """The exclusive upper bound on created_at: ``until``, or just after ``as_of`` if earlier."""
    if as_of is None:
        return until
    after = as_of + timedelta(microseconds=1)
    return after if until is None else min(until, after)


def _group_key(memory: Memory) -> str:
    if memory.kind is MemoryKind.MESSAGE and memory.message_id is not None:
        return f"{memory.thread_id}\x1f{memory.message_id}"
    return memory.id


def _hit(memory: Memory, r: ranking.Ranked, superseded_by: str | None = None) -> RecallHit:
    return RecallHit(
        id=memory.id,
        kind=memory.kind,
        text=memory.text,
        score=round(r.score, 6),
        thread_id=memory.thread_id,
        message_id=memory.message_id,
        role=memory.role,
        note_type=memory.note_type,
        tags=memory.tags,
        importance=memory.importance,
        created_at=memory.created_at,
        valid_to=memory.valid_to,
        superseded_by=superseded_by,
        chunk_index=memory.chunk_index,
        channels=sorted(r.ranks, key=lambda c: r.ranks[c]),
        ranks=r.ranks,
        relevance=round(r.relevance, 6),
        recency=round(r.recency, 6),
        pinned=memory.pinned,
        private=memory.private,
    )
