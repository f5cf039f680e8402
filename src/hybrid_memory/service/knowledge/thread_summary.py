"""A summary memory per thread, extractive: the thread's most informative sentences, in order.

One summary per thread, under a deterministic id (uuid5 of scope and thread), rewritten when
the thread grows; it is a ``summary`` memory like the eviction summaries, so recall finds it
with the thread's messages and a question spanning sessions can match the gist of a whole one.
"""

from __future__ import annotations

import math
import uuid
from collections import Counter
from collections.abc import Sequence

from hybrid_memory.models import Memory, Scope
from hybrid_memory.service.knowledge._text import content_words
from hybrid_memory.text.words import sentences

_NAMESPACE = uuid.UUID("b7e0f1d2-3c4a-4e5b-8f6a-7d8c9e0a1b2c")
SOURCE = "thread_summary"
MAX_SUMMARY_CHARS = 1_000
"""About 250 tokens: what the embedding model reads of it."""


def summary_id(scope: Scope, thread_id: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, "\x1f".join((scope.project, scope.user, thread_id))))


def in_order(messages: Sequence[Memory]) -> list[Memory]:
    """Messages in thread order: by time, and within one remember call by their prev/next chain."""
    by_id = {m.id: m for m in messages}
    heads = sorted(
        (m for m in messages if m.prev_id is None or m.prev_id not in by_id),
        key=lambda m: (m.created_at, m.message_id or "", m.chunk_index),
    )
    ordered: list[Memory] = []
    seen: set[str] = set()
    for head in heads:
        current: Memory | None = head
        while current is not None and current.id not in seen:
            seen.add(current.id)
            ordered.append(current)
            current = by_id.get(current.next_id) if current.next_id else None
    ordered.extend(sorted((m for m in messages if m.id not in seen), key=lambda m: m.created_at))
    return ordered


def _score(sentence: str, weights: Counter[str]) -> float:
    terms = set(content_words(sentence))
    if not terms:
        return 0.0
    # Names and numbers are what a later question asks about.
    specific = sum(1 for w in sentence.split()[1:] if w[:1].isupper() or any(c.isdigit() for c in w))
    return (sum(math.log1p(weights[t]) for t in terms) + 0.5 * specific) / math.sqrt(len(sentence.split()))


def extract(messages: Sequence[Memory], thread_id: str, max_chars: int = MAX_SUMMARY_CHARS) -> str:
    """The summary text of a thread's messages (given in thread order)."""
    candidates: list[tuple[int, str]] = []
    for message in messages:
        for sentence in sentences(message.text):
            if len(sentence.split()) >= 4:
                candidates.append((len(candidates), sentence))
    weights: Counter[str] = Counter()
    for _, sentence in candidates:
        weights.update(set(content_words(sentence)))
    since, until = messages[0].created_at, messages[-1].created_at
    head = f"Summary of thread {thread_id} ({len(messages)} messages, {since:%Y-%m-%d} to {until:%Y-%m-%d}):"
    chosen: list[tuple[int, str]] = []
    used = len(head)
    for position, sentence in sorted(candidates, key=lambda c: (-_score(c[1], weights), c[0])):
        if used + len(sentence) + 1 > max_chars:
            continue
        chosen.append((position, sentence))
        used += len(sentence) + 1
    return " ".join([head, *(s for _, s in sorted(chosen))])
