"""Recall's stages with literal inputs: no store, no model."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta

import anyio
import pytest

from hybrid_memory.errors import BackendError
from hybrid_memory.models import Link, Memory, MemoryKind, Neighbourhood, Note, NoteType, Relation, Scope
from hybrid_memory.service.recall import PRESETS, RecallConfig, RecallOptions, ranking, recall_config
from hybrid_memory.service.recall.channels import Found, gather
from hybrid_memory.service.recall.expand import adjacent_ids, linked, note_seeds
from hybrid_memory.service.recall.ranking import ChannelHit, Fused
from hybrid_memory.service.recall.state import RecallState, admissible, fuse, plan, rank, render
from hybrid_memory.settings import RankingSettings

NOW = datetime(2026, 1, 31, tzinfo=UTC)
SCOPE = Scope(project="p")


def message(mid: str, *, prev: str | None = None, nxt: str | None = None, **extra: object) -> Memory:
    fields: dict[str, object] = {
        "id": mid,
        "kind": MemoryKind.MESSAGE,
        "text": f"text of {mid}",
        "project": "p",
        "thread_id": "t",
        "message_id": mid,
        "created_at": NOW,
        "prev_id": prev,
        "next_id": nxt,
    }
    fields.update(extra)
    return Memory.model_validate(fields)


def note(nid: str) -> Note:
    return Note(id=nid, project="p", content=f"note {nid}", type=NoteType.FACT)


def fresh(options: RecallOptions | None = None, config: RecallConfig | None = None) -> RecallState:
    return plan(SCOPE, "q", options or RecallOptions(), NOW, config or RecallConfig())


def hits(*ids: str) -> list[ChannelHit]:
    return [ChannelHit(i, rank, 1.0 / rank) for rank, i in enumerate(ids, 1)]


def test_plan_asks_each_channel_for_at_least_four_times_the_limit() -> None:
    assert fresh(RecallOptions(limit=30)).candidates == 120
    assert fresh(RecallOptions(limit=2)).candidates == 50


def test_plan_bounds_created_at_by_as_of_when_it_is_earlier_than_until() -> None:
    state = fresh(RecallOptions(until=NOW, as_of=NOW - timedelta(days=1)))
    assert state.flt.created_before == NOW - timedelta(days=1) + timedelta(microseconds=1)


def test_plan_wants_notes_unless_kinds_leave_them_out() -> None:
    assert fresh().want_notes
    assert not fresh(RecallOptions(kinds=[MemoryKind.MESSAGE])).want_notes


async def test_gather_reports_a_failing_and_a_slow_channel_and_keeps_the_rest() -> None:
    state = fresh()

    async def good() -> Found:
        return Found(hits=hits("a"), memories=[message("a")])

    async def broken() -> Found:
        raise BackendError("store is down")

    async def slow() -> Found:
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    await gather(state, {"dense": good, "keyword": broken, "graph": slow}, timeout_s=0.05)
    assert state.channels == {"dense": hits("a")}
    assert state.skipped == {"keyword": "store is down", "graph": "TimeoutError"}
    assert set(state.memories) == {"a"}


def test_fuse_weighs_channels_by_the_configuration() -> None:
    state = fresh()
    state.channels = {"keyword": hits("a", "b"), "dense": hits("b", "a")}
    fuse(state, RecallConfig())
    assert [f.id for f in state.fused] == ["a", "b"]
    fuse(state, PRESETS["dense"])
    assert [f.id for f in state.fused] == ["b", "a"]


def test_rank_drops_candidates_without_memory_and_invalid_ones_and_keeps_one_chunk_per_message() -> None:
    state = fresh()
    state.memories = {
        "a0": message("a0", message_id="a"),
        "a1": message("a1", message_id="a", chunk_index=1),
        "old": message("old", valid_to=NOW - timedelta(days=1)),
    }
    state.fused = [
        Fused(i, 1.0 - n / 10, {"dense": n + 1}, {}) for n, i in enumerate(["a1", "x", "old", "a0"])
    ]
    rank(state, RecallConfig())
    assert [r.id for r in state.ranked] == ["a1"]


def test_rank_scores_only_the_candidates_that_can_reach_the_limit_and_shows_what_scoring_all_shows() -> None:
    rng = random.Random(5)
    for trial in range(60):
        limit = rng.choice([1, 3, 5, 10])
        state = fresh(RecallOptions(limit=limit))
        size = rng.randint(0, 120)
        state.memories = {
            f"m{n}": message(
                f"m{n}",
                message_id=f"msg{n // rng.choice([1, 2, 3])}",
                created_at=NOW - timedelta(days=rng.uniform(0, 400)),
                importance=rng.choice([None, 0.0, 0.3, 0.9, 1.0]),
            )
            for n in range(size)
        }
        state.fused = sorted(
            (
                Fused(i, rng.choice([rng.random(), 0.5]), {"dense": n + 1}, {})
                for n, i in enumerate(state.memories)
            ),
            key=lambda f: -f.relevance,
        )
        every = ranking.dedupe_by(
            ranking.final_scores(
                state.fused,
                created_at=lambda i, m=state.memories: m[i].created_at,
                importance=lambda i, m=state.memories: m[i].importance,
                now=NOW,
                weights=RecallConfig().final,
            ),
            key=lambda i, m=state.memories: m[i].message_id or i,
        )
        rank(state, RecallConfig())
        assert state.ranked[:limit] == every[:limit], trial
        assert len(state.ranked) >= min(limit, len(every))


def test_render_cuts_to_the_limit_and_carries_skipped_channels() -> None:
    state = fresh(RecallOptions(limit=1))
    state.memories = {"a": message("a"), "b": message("b")}
    state.fused = [Fused("a", 0.9, {"keyword": 1}, {}), Fused("b", 0.5, {"keyword": 2}, {})]
    state.skipped = {"graph": "TimeoutError"}
    rank(state, RecallConfig())
    result = render(state)
    assert [(h.id, h.channels) for h in result.results] == [("a", ["keyword"])]
    assert result.skipped_channels == {"graph": "TimeoutError"}


def test_admissible_as_of_hides_what_was_created_later() -> None:
    later = message("a", created_at=NOW + timedelta(days=1))
    assert not admissible(later, NOW, RecallOptions(as_of=NOW))
    assert admissible(later, NOW, RecallOptions())


def test_note_seeds_are_the_best_three_notes_among_the_first_ten() -> None:
    state = fresh()
    state.notes = {n: note(n) for n in ("n1", "n2", "n3", "n4")}
    state.fused = [Fused(i, 1.0, {"graph": 1}, {}) for i in ("m", "n1", "n2", "n3", "n4")]
    assert note_seeds(state) == ["n1", "n2", "n3"]


def test_linked_notes_carry_their_link_strength_and_leave_the_seeds_out() -> None:
    def link(a: str, b: str, strength: float) -> Link:
        return Link(from_id=a, to_id=b, relation=Relation.RELATES_TO, strength=strength, project="p")

    found = [
        (
            "s1",
            Neighbourhood(
                notes=[note("weak"), note("strong")],
                links=[link("s1", "weak", 0.2), link("strong", "s1", 0.9)],
            ),
        ),
        ("s2", Neighbourhood(notes=[note("strong"), note("s1")], links=[link("s2", "strong", 1.0)])),
    ]
    assert linked(found) == {"s1": [("weak", 0.2), ("strong", 0.9)], "s2": [("strong", 1.0)]}


def test_adjacent_ids_are_the_turns_around_top_message_hits_only() -> None:
    state = fresh()
    state.memories = {"b": message("b", prev="a", nxt="c"), "y": message("y", prev="x")}
    state.fused = [
        Fused("b", 1.0, {"dense": 1}, {}),
        Fused("n", 0.9, {"graph": 1}, {}),
        Fused("y", 0.8, {}, {}),
    ]
    assert adjacent_ids(state, top=2) == {"b": ["a", "c"]}


def test_recall_config_takes_the_preset_and_only_the_settings_the_user_set() -> None:
    assert recall_config(RankingSettings(), timeout_s=3.0) == RecallConfig(timeout_s=3.0)
    config = recall_config(
        RankingSettings(preset="keyword", keyword_weight=0.5, adjacent_top=2), timeout_s=1.0
    )
    assert (config.keyword.weight, config.dense.weight, config.adjacent.top) == (0.5, 0.0, 2)
    assert recall_config(RankingSettings(recency_weight=0.0), timeout_s=1.0).final.recency == 0.0


def test_recall_config_rejects_a_negative_weight() -> None:
    with pytest.raises(ValueError, match="greater than or equal to 0"):
        RecallConfig.model_validate({"dense": {"weight": -1}})
