"""The question as the statement that would answer it, for the dense channel.

Memories are mostly statements ("I went camping last week"); a question's embedding
carries its interrogative form ("What ... did ... ?"), which pulls it towards other
questions. Dropping the question words leaves the content the answer shares.
"""

from __future__ import annotations

import re

QUESTION_WORDS = frozenset(
    [
        "what",
        "which",
        "who",
        "whom",
        "whose",
        "when",
        "where",
        "why",
        "how",
        "do",
        "does",
        "did",
        "is",
        "are",
        "was",
        "were",
        "has",
        "have",
        "had",
    ]
)
_WORD = re.compile(r"[\w'+-]+|[^\w\s]")


def statement(query: str) -> str:
    """``query`` without question words and question marks; the query itself when nothing else is left."""
    kept = [t for t in _WORD.findall(query) if t.lower() not in QUESTION_WORDS and t != "?"]
    text = " ".join(kept)
    return text if any(ch.isalnum() for ch in text) else query
