from datetime import UTC, datetime

import pytest

from hybrid_memory.service.recall.dates import Period, lift, periods
from hybrid_memory.service.recall.ranking import Fused


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What painting did Melanie show on October 13, 2023?", [Period(2023, 10, 13)]),
        ("What did Gina find on 1 February, 2023?", [Period(2023, 2, 1)]),
        ("What workout did Maria start in December 2023?", [Period(2023, 12)]),
        ("When did Melanie go camping in June?", [Period(None, 6)]),
        ("How often did she go to the beach in 2023?", [Period(2023)]),
        ("may I ask what we decided about billing?", []),
        ("what happened last May?", []),
    ],
)
def test_periods_reads_explicit_calendar_dates_only(query: str, expected: list[Period]) -> None:
    assert periods(query) == expected


def test_a_month_without_a_year_matches_that_month_of_any_year() -> None:
    june = Period(None, 6)
    assert june.contains(datetime(2021, 6, 30, tzinfo=UTC))
    assert not june.contains(datetime(2021, 7, 1, tzinfo=UTC))


def test_lift_raises_the_candidates_inside_the_period_and_keeps_the_order_otherwise() -> None:
    fused = [
        Fused("a", 0.9, {"dense": 1}, {}),
        Fused("b", 0.8, {"dense": 2}, {}),
        Fused("c", 0.1, {"dense": 3}, {}),
    ]
    out = lift(fused, {"b", "c"}, 0.15)
    assert [(f.id, round(f.relevance, 2)) for f in out] == [("b", 0.95), ("a", 0.9), ("c", 0.25)]
