"""Recall's channels and weights as one typed configuration, with named presets.

A preset is a complete configuration; ``HYBRID_MEMORY_RANKING_PRESET`` picks one and
any other ``HYBRID_MEMORY_RANKING_*`` variable a user sets overrides its field.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from hybrid_memory.service.recall import calibration, ranking
from hybrid_memory.settings import RankingSettings

ChannelName = Literal["keyword", "context", "dense", "graph", "neighbour"]


class ChannelConfig(BaseModel):
    """One way of finding candidates and how much its opinion weighs in fusion."""

    model_config = ConfigDict(frozen=True)

    weight: float = Field(ge=0)
    """0 turns the channel off: it is not searched at all."""
    floor: float = 0.0
    """Calibrated fusion: raw scores at or below this count 0."""
    ceiling: float = 1.0
    """Calibrated fusion, bounded scores (cosine): raw scores at or above this count 1."""
    saturation: float | None = Field(default=None, gt=0)
    """Calibrated fusion, unbounded scores (BM25): the raw score above ``floor`` that counts 0.5."""

    @property
    def calibration(self) -> calibration.Calibration:
        return calibration.Calibration(floor=self.floor, ceiling=self.ceiling, saturation=self.saturation)

    @property
    def enabled(self) -> bool:
        return self.weight > 0


class AdjacentConfig(BaseModel):
    """The turns next to the best message hits, ranked as results of their own.

    Off by default: each message hit carries its neighbours (``context_before`` /
    ``context_after``) instead, which on LoCoMo found as much evidence at rank 10
    without spending result slots on turns that matched nothing (bench/recall_ablation.md).
    """

    model_config = ConfigDict(frozen=True)

    share: float = Field(default=0.0, ge=0, le=1)
    top: int = Field(default=5, ge=0, le=50)

    @property
    def enabled(self) -> bool:
        return self.share > 0 and self.top > 0


class RecallConfig(BaseModel):
    """Everything that decides what recall finds and in which order."""

    model_config = ConfigDict(frozen=True)

    # The calibrations serve calibrated fusion and, in every preset, the hits' ``match``:
    # medians on LoCoMo's tuning half: cosine of the first dense hit 0.58, of the tenth 0.48;
    # BM25 of the first keyword hit 9.8, of the tenth 4.8.
    keyword: ChannelConfig = ChannelConfig(weight=0.35, saturation=5.0)
    """BM25 over a memory's own text."""
    context: ChannelConfig = ChannelConfig(weight=0.35, saturation=5.0)
    """BM25 over a memory's text with the tail of the message before it."""
    dense: ChannelConfig = ChannelConfig(weight=0.3, floor=0.3, ceiling=0.8)
    graph: ChannelConfig = ChannelConfig(weight=0.35, saturation=5.0)
    """Full-text search over notes in the graph store."""
    neighbour: ChannelConfig = ChannelConfig(weight=0.3)
    """Notes linked to the best note hits: the share of a seed's relevance a link of strength 1 lends."""
    adjacent: AdjacentConfig = AdjacentConfig()
    fusion: Literal["score", "rrf", "calibrated"] = "score"
    """``score``: min-max per query; ``rrf``: reciprocal ranks; ``calibrated``: fixed per-channel maps."""
    question_factor: float = Field(default=1.0, ge=0, le=1)
    """Relevance kept by a turn that only asks (ends with "?"); 1 leaves questions alone."""
    own_words_first: bool = True
    """A turn that matched through the turn before it stays below that turn (``ranking.own_words_first``)."""
    dates: float = Field(default=0.3, ge=0, le=1)
    """Relevance added to candidates created in a period the query names ("in May 2023"); 0: off."""
    answers_first: bool = True
    """A reply found by a channel takes the place of the question before it (``ranking.answers_first``)."""
    pure_questions: bool = False
    """Answers first only for a turn that asks and states nothing of its own (``speakers.only_asks``)."""
    outcomes: bool = True
    """A question about what was chosen or decided takes a thread's last word first (``outcomes``)."""
    speakers: float = Field(default=0.5, ge=0, le=1)
    """Relevance kept by turns of the speaker a query does not ask about (``speakers.asks_about``); 1: off."""
    named_speakers: bool = True
    """A query naming one author of turns written "Name: text" prefers that author's turns."""
    feedback: float = Field(default=0.0, ge=0, le=1)
    """Weight of a term borrowed from the best hits for a second keyword search (``feedback``); 0: off."""
    feedback_docs: int = Field(default=5, ge=1, le=50)
    """How many of the first round's best candidates lend their words."""
    strong_match: float = Field(default=0.4, ge=0, le=1)
    """Hits whose ``match`` is below this are marked weak (probably unrelated) in what the model reads."""
    rrf_k: int = Field(default=60, ge=1)
    candidates: int = Field(default=50, ge=1, le=1000)
    """How many candidates each channel contributes before fusion."""
    final: ranking.Weights = ranking.Weights()
    timeout_s: float = Field(default=10.0, gt=0)
    """Each channel's own time limit; one that runs over is skipped, the rest still answer."""

    def channel(self, name: ChannelName) -> ChannelConfig:
        found: ChannelConfig = getattr(self, name)
        return found

    def channel_weights(self) -> dict[str, float]:
        return {name: self.channel(name).weight for name in CHANNELS}

    def calibrations(self) -> dict[str, calibration.Calibration]:
        """Per channel that scores a memory's own text, the fixed map of its raw scores to 0..1."""
        return {name: self.channel(name).calibration for name in CHANNELS if name != "neighbour"}


CHANNELS: tuple[ChannelName, ...] = ("keyword", "context", "dense", "graph", "neighbour")

_OFF = ChannelConfig(weight=0.0)

PRESETS: dict[str, RecallConfig] = {
    "hybrid": RecallConfig(),
    "keyword": RecallConfig(context=_OFF, dense=_OFF, neighbour=_OFF, adjacent=AdjacentConfig(share=0.0)),
    "dense": RecallConfig(keyword=_OFF, context=_OFF, neighbour=_OFF, adjacent=AdjacentConfig(share=0.0)),
    "rrf": RecallConfig(fusion="rrf"),
    "calibrated": RecallConfig(fusion="calibrated"),
}
"""``hybrid`` is the default; the others are the baselines it is measured against."""

# Which settings field overrides which part of the preset.
_CHANNEL_FIELDS: dict[str, ChannelName] = {
    "keyword_weight": "keyword",
    "context_weight": "context",
    "dense_weight": "dense",
    "graph_weight": "graph",
    "neighbour_weight": "neighbour",
}
_FINAL_FIELDS = {
    "relevance_weight": "relevance",
    "recency_weight": "recency",
    "importance_weight": "importance",
    "recency_half_life_days": "half_life_days",
}
_ADJACENT_FIELDS = {"adjacent_share": "share", "adjacent_top": "top"}
_TOP_FIELDS = ("fusion", "rrf_k", "candidates", "own_words_first", "feedback", "speakers", "strong_match")


def recall_config(settings: RankingSettings, *, timeout_s: float) -> RecallConfig:
    """The preset ``settings.preset`` names, with every field the user set explicitly applied."""
    base = PRESETS[settings.preset]
    given = settings.model_fields_set
    update: dict[str, object] = {"timeout_s": timeout_s}
    for field, channel in _CHANNEL_FIELDS.items():
        if field in given:
            update[channel] = base.channel(channel).model_copy(update={"weight": getattr(settings, field)})
    final = {attr: getattr(settings, field) for field, attr in _FINAL_FIELDS.items() if field in given}
    if final:
        update["final"] = replace(base.final, **final)
    adjacent = {attr: getattr(settings, field) for field, attr in _ADJACENT_FIELDS.items() if field in given}
    if adjacent:
        update["adjacent"] = base.adjacent.model_copy(update=adjacent)
    update.update((field, getattr(settings, field)) for field in _TOP_FIELDS if field in given)
    return base.model_copy(update=update)
