"""The statement finder: the clauses of user turns a later session should know, as notes.

Two layers, no model call beyond the packaged embedding model:

- the cues (:mod:`.cues`): sentence-start patterns in English and a few in Portuguese,
  Spanish, French and German; precise where they fire, and they rarely fire on casual text;
- the classifier (:mod:`.classifier`): every candidate clause of a user turn (see
  :mod:`.clauses`: pastes, logs, code, questions, thanks and hypotheticals are never
  candidates) that carries a marker of some kind (:mod:`.lexicon`) is embedded and scored
  by a logistic regression over its embedding, its markers, the assistant's turn before
  (a bare answer to a question or to a list of options) and whether a cue fired.

A clause scored above the shipped threshold becomes a note of the kind its strongest marker
names (rule, decision, preference, fact). Only candidates are embedded: a few per session.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.service.knowledge.statements import lexicon
from hybrid_memory.service.knowledge.statements.classifier import Classifier, Matrix, shipped
from hybrid_memory.service.knowledge.statements.clauses import Clause, clauses
from hybrid_memory.service.knowledge.statements.cues import Cue, Said, cue_kind, cues, key, replaced
from hybrid_memory.service.knowledge.statements.lexicon import language

Mode = Literal["cues", "classifier", "both"]
FEATURES = (*lexicon.NAMES, "cue")
"""The lexical features after the embedding, in the classifier's order."""
PREV_CHARS = 600
"""The end of the assistant's turn before a user turn that is read with it."""
_MARKED = tuple(lexicon.NAMES.index(n) for n in ("rule", "preference", "decision", "fact"))
_CJK, _ONE_OFF = lexicon.NAMES.index("cjk"), lexicon.NAMES.index("one_off")


@dataclass(frozen=True)
class Candidate:
    """A clause worth scoring and the turn it was said in."""

    turn: Said
    clause: Clause
    marks: tuple[float, ...]
    """The clause's lexical features (FEATURES), computed once."""


def _count(counts: dict[str, int], name: str) -> int:
    counts[name] = counts.get(name, 0) + 1
    return counts[name]


def features(clause: Clause) -> list[float]:
    """The lexical features of ``clause`` (FEATURES)."""
    marks = lexicon.features(clause.text, answers=bool(clause.answer_to), in_plan=clause.in_plan)
    return [*marks, 1.0 if cue_kind(clause.text) else 0.0]


def worth_scoring(clause: Clause, marks: Sequence[float]) -> bool:
    """Whether ``clause`` carries a marker, answers the assistant, or a cue fired: only those are embedded."""
    if marks[_CJK] and marks[_ONE_OFF]:
        return False  # "幫我 …": a request, whatever else it says
    return bool(clause.answer_to) or clause.in_plan or marks[-1] > 0 or any(marks[i] > 0 for i in _MARKED)


def candidates(said: Sequence[Said]) -> list[Candidate]:
    """The clauses of the user turns in ``said`` worth scoring, each read with the assistant turn before."""
    found: list[Candidate] = []
    prev = ""
    for turn in said:
        if turn.role == "assistant":
            prev = turn.text[-PREV_CHARS:]
        elif turn.role == "user":
            for clause in clauses(turn.text, prev):
                marks = tuple(features(clause))
                if worth_scoring(clause, marks):
                    found.append(Candidate(turn, clause, marks))
            prev = ""
    return found


def rows(found: Sequence[Candidate], vectors: Sequence[Sequence[float]]) -> Matrix:
    """The classifier's input: each clause's embedding, then its lexical features."""
    marks = np.asarray([c.marks for c in found], dtype=np.float32).reshape(len(found), len(FEATURES))
    return np.hstack([np.asarray(vectors, dtype=np.float32).reshape(len(found), -1), marks])


def content(clause: Clause) -> str:
    """The note's words: the clause, tidied, with what a bare answer answered."""
    text = " ".join(clause.text.split()).rstrip(",;:")
    text = text[:1].upper() + text[1:]
    if clause.answer_to:
        return f"{text} ({clause.answer_to})"
    if text.endswith((".", "!", "…", "。", "\uff01")) or lexicon.CJK.search(text[-1:]):
        return text
    return text + "."


_VALUE_ASKED = re.compile(
    r"\b(?:which|what (?:would|do|should)|how (?:long|many|much|often)|prefer|like (?:it|me) to|"
    r"change it to|set it to|pick|choose)\b",
    re.IGNORECASE,
)
_LATIN_EN = re.compile(r"^[\x00-\x7f]*$")
_STANDING = re.compile(
    r"\b(?:is|are) (?:the |our )?(?:single )?source of th?ruth\b|^(?:from now on|going forward|as a rule)\b",
    re.IGNORECASE,
)
"""What says a clause stands for good, in English: "… is the source of truth", "from now on …"."""
PLAN_NOTES = 8
"""The most notes one plan gives: its first decisions and rules."""


def cued(clause: Clause, features: Sequence[float]) -> bool:
    """Whether ``clause`` is a statement by cues alone, where the embedding is weakest.

    A bare reply that picks an option or gives the value the assistant asked for; a rule or
    decision line of a plan the user hands over; a rule marker in a language other than English
    (all-MiniLM-L6-v2 reads those poorly), or a decision marker with a durable one ("all",
    "every", 所有), outside a one-off request; a clause that says it stands ("… is the source
    of truth").
    """
    marks = dict(zip(FEATURES, features, strict=True))
    if clause.answer_to:
        value = any(ch.isdigit() for ch in clause.text) and bool(_VALUE_ASKED.search(clause.answer_to))
        return clause.answer_to.startswith(("option ", "one of the options")) or value
    if clause.in_plan:
        return (marks["rule"] or marks["decision"] or marks["preference"] or marks["durable"]) > 0
    if _STANDING.search(clause.text):
        return True
    foreign = not _LATIN_EN.match(clause.text) or language(clause.text) != "en"
    said = marks["rule"] > 0 or (marks["decision"] > 0 and marks["durable"] > 0)
    return foreign and said and marks["one_off"] == 0


def kind(clause: Clause) -> str:
    """A bare answer or a plan's line: a decision (a rule by a rule marker); else the cue's kind."""
    if clause.answer_to:
        return "decision"
    if clause.in_plan:
        return "rule" if lexicon.features(clause.text)[0] else "decision"
    if _STANDING.search(clause.text):
        return "rule"
    return cue_kind(clause.text) or lexicon.kind(clause.text)


async def find(
    said: Sequence[Said],
    embedder: Embedder,
    *,
    mode: Mode = "both",
    classifier: Classifier | None = None,
) -> list[Cue]:
    """The notes stated in ``said`` (turns in order), by the cues, the classifier or both (the default)."""
    found: dict[str, Cue] = {} if mode == "classifier" else {key(c.content): c for c in cues(said)}
    picked = candidates(said)
    plans: dict[str, int] = {}
    chosen = [
        c
        for c in picked
        if mode != "classifier"
        and cued(c.clause, c.marks)
        and (not c.clause.in_plan or _count(plans, c.turn.id) <= PLAN_NOTES)
    ]
    model = classifier or shipped()
    # In both modes a clause a cue fired on is a note already: only the others are embedded.
    taken = {id(c) for c in chosen}
    sure: dict[int, float] = {}
    scored = [c for c in picked if id(c) not in taken and not (mode == "both" and c.marks[-1])]
    if mode != "cues" and model is not None and scored:
        vectors = await embedder.embed_documents([c.clause.text for c in scored])
        scores = model.scores(rows(scored, vectors))
        sure.update((id(c), float(p)) for c, p in zip(scored, scores, strict=True) if p >= model.threshold)
        chosen += [c for c in scored if id(c) in sure]
    for candidate in chosen:
        clause = candidate.clause
        words = content(clause)
        cue = found.setdefault(
            key(words),
            Cue(
                kind(clause),
                words,
                replaces=replaced(clause.text),
                said=clause.text,
                score=min(
                    round(sure.get(id(candidate), 1.0), 3), 1.0 if id(candidate) not in sure else 0.999
                ),
            ),
        )
        if candidate.turn.id not in cue.sources:
            cue.sources.append(candidate.turn.id)
    return list(found.values())
