from datetime import UTC, datetime

import pytest

from hybrid_memory.models import Memory, MemoryKind, Scope
from hybrid_memory.service.recall import RecallConfig, RecallOptions
from hybrid_memory.service.recall.outcomes import asks_outcome, last_word_first
from hybrid_memory.service.recall.ranking import ChannelHit, Fused
from hybrid_memory.service.recall.speakers import (
    asks_about,
    author,
    named_author,
    prefer,
    replies_to,
)
from hybrid_memory.service.recall.state import fuse, plan
from hybrid_memory.text.questions import only_asks


@pytest.mark.parametrize(
    ("query", "speaker"),
    [
        ("which food allergy does my sibling have?", "user"),
        ("How many doctor's appointments did I go to in March?", "user"),
        ("Can you remind me what I said about my car?", "user"),
        ("Can you suggest a hotel for my trip to Miami?", "user"),
        ("What did you recommend for my trip?", "assistant"),
        ("I'm looking back at our previous chat about campaigns. How much went to influencers?", "assistant"),
        ("which database did we choose for billing?", None),
        ("When did Caroline go to the LGBTQ support group?", None),
        ("what is the best way to index a list in python, i think", None),
    ],
)
def test_a_query_asks_for_the_user_in_the_first_person_and_the_assistant_by_its_words(
    query: str, speaker: str | None
) -> None:
    assert asks_about(query) == speaker


@pytest.mark.parametrize(
    ("text", "asks"),
    [
        ("What's your favourite book?", True),
        ("Hey Mel! How are you?", True),
        ("I moved to Lisbon last week with my partner. Any tips for finding a dentist?", False),
        ("We need to pick the database for the new billing service this week.", False),
    ],
)
def test_only_a_turn_that_states_nothing_only_asks(text: str, asks: bool) -> None:
    assert only_asks(text) is asks


def test_turns_of_the_other_speaker_keep_a_share_of_their_relevance() -> None:
    fused = [
        Fused("reply", 1.0, {"dense": 1}, {}),
        Fused("said", 0.9, {"dense": 2}, {}),
        Fused("note", 0.5, {"graph": 1}, {}),
    ]
    roles = {"reply": "assistant", "said": "user", "note": None}
    out = prefer(fused, roles, "user", 0.8)
    assert [(f.id, f.relevance) for f in out] == [("said", 0.9), ("reply", 0.8), ("note", 0.5)]


def _turn(i: str, role: str, prev: str | None, chunk: int = 0) -> Memory:
    return Memory(
        id=i,
        kind=MemoryKind.MESSAGE,
        text=i,
        project="p",
        thread_id="t",
        role=role,
        prev_id=prev,
        chunk_index=chunk,
    )


def test_a_reply_is_traced_to_the_turn_it_answers_through_its_loaded_chunks() -> None:
    memories = {
        m.id: m
        for m in (
            _turn("said", "user", None),
            _turn("reply0", "assistant", "said"),
            _turn("reply1", "assistant", "reply0", chunk=1),
            _turn("orphan1", "assistant", "orphan0", chunk=1),
        )
    }
    assert replies_to(memories, "user") == {"said": "reply0"}


@pytest.mark.parametrize(
    ("query", "asks"),
    [
        ("which database did we choose for billing?", True),
        ("What did Caroline decide to do after the race?", True),
        ("Which cocktail recipe did I end up making?", True),
        ("When did Caroline go to the LGBTQ support group?", False),
    ],
)
def test_a_query_about_what_was_chosen_asks_for_an_outcome(query: str, asks: bool) -> None:
    assert asks_outcome(query) is asks


def test_the_last_word_of_a_thread_takes_the_lead_from_the_turn_that_opened_it() -> None:
    fused = [
        Fused("opened", 1.0, {"keyword": 1}, {"keyword": 9.0}),
        Fused("filler", 0.55, {"context": 1}, {"context": 5.0}),
        Fused("settled", 0.25, {"keyword": 2}, {"keyword": 3.0}),
        Fused("other", 0.2, {"keyword": 3}, {"keyword": 2.0}),
    ]
    threads = {"opened": "t", "filler": "t", "settled": "t", "other": "u"}
    order = ["opened", "filler", "settled"]
    out = last_word_first(
        fused, threads, lambda b, a: a in order and b in order and order.index(b) > order.index(a)
    )
    assert [(f.id, f.relevance) for f in out] == [
        ("settled", 1.0),
        ("opened", 0.99),
        ("filler", 0.55),
        ("other", 0.2),
    ]


@pytest.mark.parametrize(
    ("text", "name"),
    [
        ("Melanie: I ran a charity race for mental health last Saturday.", "Melanie"),
        ("O'Neil: sounds good", "O'Neil"),
        ("I ran a race: it was great.", None),
        ("melanie: lower case is not a name", None),
        ("See https://example.com: the docs", None),
    ],
)
def test_a_turn_written_name_colon_text_has_that_author(text: str, name: str | None) -> None:
    assert author(text) == name


@pytest.mark.parametrize(
    ("query", "authors", "named"),
    [
        ("When did Melanie run a charity race?", ["Caroline", "Melanie", None], "Melanie"),
        ("What do both Melanie and Caroline like?", ["Caroline", "Melanie"], None),
        ("When did Mel run a charity race?", ["Caroline", "Melanie"], None),
        ("What did the Note say about billing?", ["Note", "Note"], None),
        ("Which database did we choose?", ["Caroline", "Melanie"], None),
    ],
)
def test_a_query_names_one_of_two_or_more_authors_as_a_whole_word(
    query: str, authors: list[str | None], named: str | None
) -> None:
    assert named_author(query, authors) == named


def _said(i: str, text: str) -> Memory:
    when = datetime(2023, 5, 8, tzinfo=UTC)
    return Memory(id=i, kind=MemoryKind.MESSAGE, text=text, project="p", thread_id=i, created_at=when)


def test_a_query_naming_a_speaker_puts_what_that_speaker_said_before_another_s_echo_of_it() -> None:
    query = "When did Melanie run a charity race?"
    memories = {
        "echo": _said(
            "echo", "Caroline: That charity race sounds great, Mel! Raising awareness is rewarding."
        ),
        "said": _said("said", "Melanie: I ran a charity race for mental health last Saturday."),
        "other": _said("other", "Caroline: I went to a support group yesterday."),
    }
    channels = {
        "keyword": [ChannelHit("echo", 1, 9.0), ChannelHit("said", 2, 8.0), ChannelHit("other", 3, 1.0)],
        "dense": [ChannelHit("echo", 1, 0.7), ChannelHit("said", 2, 0.6), ChannelHit("other", 3, 0.2)],
    }
    ranked = {}
    for on in (True, False):
        config = RecallConfig(named_speakers=on)
        state = plan(Scope(project="p"), query, RecallOptions(), datetime(2026, 1, 1, tzinfo=UTC), config)
        state.channels, state.memories = channels, dict(memories)
        fuse(state, config)
        ranked[on] = [f.id for f in state.fused]
    assert ranked[True] == ["said", "echo", "other"]
    assert ranked[False] == ["echo", "said", "other"]
