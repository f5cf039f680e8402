"""Periods a query names ("in May 2023", "on October 13, 2023", "in June"), and the lift they give.

A question about a period ("what did Maria donate in December 2023?") is answered by
what was said then; the memories' own dates say which those are. Only explicit
calendar dates are read: a month (any year, or the given one), a day of a month,
or a bare year. Relative phrases ("last May") depend on a clock the question's
author and the store may not share, so they are left alone.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime

from hybrid_memory.service.recall import ranking

MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        1,
    )
    for name in names
}
_MONTH = rf"({'|'.join(sorted(MONTHS, key=len, reverse=True))})\.?"
_YEAR = r"((?:19|20)\d\d)"
_PATTERNS = (
    # "October 13, 2023", "May 23 2023"
    re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+{_YEAR}\b"),
    # "13 October 2023", "1 February, 2023"
    re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b"),
    # "May 2023", "in June"
    re.compile(rf"\b(?:in|during|of|since|by)\s+{_MONTH}(?:,?\s+{_YEAR})?\b|\b{_MONTH},?\s+{_YEAR}\b"),
    # "in 2022"
    re.compile(rf"\b(?:in|during|of)\s+{_YEAR}\b"),
)


@dataclass(frozen=True)
class Period:
    """A calendar period; a missing part matches anything."""

    year: int | None = None
    month: int | None = None
    day: int | None = None

    def contains(self, when: datetime) -> bool:
        return (
            (self.year is None or when.year == self.year)
            and (self.month is None or when.month == self.month)
            and (self.day is None or when.day == self.day)
        )


def periods(query: str) -> list[Period]:
    """Every explicit date the query names, most specific reading first, each once."""
    text = query.lower()
    found: list[Period] = []
    for match in _PATTERNS[0].finditer(text):
        found.append(Period(int(match[3]), MONTHS[match[1]], int(match[2])))
    for match in _PATTERNS[1].finditer(text):
        found.append(Period(int(match[3]), MONTHS[match[2]], int(match[1])))
    if not found:
        for match in _PATTERNS[2].finditer(text):
            month, year = (match[1], match[2]) if match[1] else (match[3], match[4])
            found.append(Period(int(year) if year else None, MONTHS[month]))
    if not found:
        found = [Period(int(match[1])) for match in _PATTERNS[3].finditer(text)]
    return list(dict.fromkeys(found))


def lift(fused: Sequence[ranking.Fused], inside: Collection[str], amount: float) -> list[ranking.Fused]:
    """Candidates in ``inside`` gain ``amount`` of relevance (capped at 1); order as after fusion."""
    out = [
        ranking.Fused(f.id, min(1.0, f.relevance + amount), f.ranks, f.scores) if f.id in inside else f
        for f in fused
    ]
    return ranking.in_order(out, inside)
