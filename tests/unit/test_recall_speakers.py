import pytest

from hybrid_memory.ranking import Fused
from hybrid_memory.service.recall.speakers import asks_about, only_asks, prefer


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
