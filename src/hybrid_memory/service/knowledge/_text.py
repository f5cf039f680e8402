"""Stop words and content words for the extractive parts (summaries, map labels, consolidation)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from hybrid_memory.text.words import SENTENCE_END as SENTENCE_END
from hybrid_memory.text.words import words

STOPWORDS = frozenset(
    """
a about after again all also am an and any are as at be because been before being
but by can could did do does doing don't for from had has have having he her here
hers him his how i i'm if in into is it it's its just let's like me my
no not now of off on once only or other our ours out over really so some such
than that that's the their theirs them then there these they this those through to too up very
was we were what when where which while who whom why will with would yes you your yours
oh ok okay yeah hey hi hello thanks thank sure well great good lot much many one get
got going know think want wanted
""".split()  # noqa: SIM905 - a word list reads best as text
)


def content_words(text: str) -> list[str]:
    """Words that carry meaning: no stop words, no single letters."""
    return [w for w in words(text) if len(w) > 1 and w not in STOPWORDS]


def top_terms(texts: Iterable[str], n: int) -> list[str]:
    """The ``n`` content words found in most of ``texts`` (ties: alphabetical)."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(set(content_words(text)))
    return [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]]
