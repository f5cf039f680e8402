"""What both graph stores share about text and time, so they treat the same input the same way."""

from __future__ import annotations

import re
from datetime import UTC, datetime

# Letters and digits; "_" splits words, as SQLite's unicode61 tokenizer and Lucene's standard one do.
WORD = re.compile(r"[^\W_]+")
# Lucene's English stop set, which Neo4j's full-text indexes drop too, so both graph
# backends treat a query of stop words as empty.
# fmt: off
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it",
    "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these",
    "they", "this", "to", "was", "will", "with",
})
# fmt: on
MAX_QUERY_TERMS = 64


def query_terms(text: str) -> list[str]:
    """The distinct searchable words of any user text, lower-cased, stop words dropped, at most 64."""
    terms: list[str] = []
    for word in WORD.findall(text.lower()):
        if word not in STOPWORDS and word not in terms:
            terms.append(word)
    return terms[:MAX_QUERY_TERMS]


def quoted_or(terms: list[str]) -> str:
    """The words quoted and OR-ed: operators of FTS5 and Lucene become plain words (words hold no quote)."""
    return " OR ".join(f'"{term}"' for term in terms)


def fmt_time(dt: datetime) -> str:
    """Fixed-width ISO 8601 in UTC, so text order is time order. Naive datetimes are taken as UTC."""
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.astimezone(UTC).isoformat(timespec="microseconds")


def fmt_time_opt(dt: datetime | None) -> str | None:
    return None if dt is None else fmt_time(dt)


def parse_time_opt(text: str | None) -> datetime | None:
    return None if text is None else datetime.fromisoformat(text)
