"""Questions about an outcome ("which database did we choose?") are answered by the last word on it.

A discussion opens with turns that name the matter ("we need to pick the database for
billing") and ends with the one that settles it ("billing will use PostgreSQL 16"). The
opening turn shares most of the question's words, so every channel prefers it; but a
question about what was chosen or decided asks for the end of the discussion, which comes
later in the same thread. So, for such a question, the latest turn of a thread that matched
the question by its own words and is among the first few candidates takes the place of the
thread's best, and the best steps just below.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence

from hybrid_memory.service.recall import ranking

_OUTCOME = re.compile(
    r"\b(?:cho(?:ose|se|sen)|decid(?:e|ed)|decision|pick(?:ed)?|settled?|agreed?|went with|go with|"
    r"end(?:ed)? up|opt(?:ed)? for|select(?:ed)?|conclu(?:de|ded|sion)|final(?:ly)?)\b",
    re.IGNORECASE,
)
TOP = 5
"""A later turn takes the best's place only from among the first candidates: a near miss, not any mention."""


def asks_outcome(query: str) -> bool:
    """Whether ``query`` asks what was chosen, decided or settled."""
    return _OUTCOME.search(query) is not None


def last_word_first(
    fused: Sequence[ranking.Fused],
    thread_of: Mapping[str, str],
    after: Callable[[str, str], bool],
    *,
    own: str = "keyword",
    below: float = 0.99,
) -> list[ranking.Fused]:
    """Per thread, the latest of the first ``TOP`` turns found by their ``own`` words takes the lead.

    ``thread_of``: message candidate -> its thread; ``after(b, a)``: whether turn b comes after turn a.
    """
    by_id = {f.id: f for f in fused}
    best: dict[str, ranking.Fused] = {}
    for f in fused:  # best first
        thread = thread_of.get(f.id)
        if thread is not None and f.scores.get(own, 0.0) > 0 and thread not in best:
            best[thread] = f
    lifted: dict[str, ranking.Fused] = {}
    for thread, top in best.items():
        later = [
            f
            for f in fused[:TOP]
            if thread_of.get(f.id) == thread and f.scores.get(own, 0.0) > 0 and after(f.id, top.id)
        ]
        last = next((f for f in later if not any(after(g.id, f.id) for g in later if g is not f)), None)
        if last is None:
            continue
        lifted[last.id] = ranking.Fused(last.id, top.relevance, last.ranks, last.scores)
        lifted[top.id] = ranking.Fused(top.id, below * top.relevance, top.ranks, top.scores)
    return ranking.in_order([lifted.get(f.id, by_id[f.id]) for f in fused], lifted)
