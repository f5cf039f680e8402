"""Which memories a project's limits evict, and the extractive summary of them: pure functions.

The policies order the unpinned memories; the first ones go until the project fits
its limits again. When evicted memories are replaced by a summary, the summary is
one more item of at most ``summary_tokens`` tokens, and the plan makes room for it.
Pinned memories are never evicted, so a project whose pinned memories alone exceed
a limit stays over it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from hybrid_memory.models import Memory
from hybrid_memory.text.words import SENTENCE_END

Policy = Literal["lru", "fifo", "ttl"]

SUMMARY_MAX_TOKENS = 160
"""The longest summary written on eviction (embedding-model tokens)."""


@dataclass(frozen=True)
class Limits:
    max_items: int | None = None
    max_tokens: int | None = None
    policy: Policy = "lru"
    ttl_cutoff: datetime | None = None
    """With policy ``ttl``: memories created before this are evicted whatever the counts."""
    summary_tokens: int = 0
    """Room to keep for the summary that replaces what is evicted; 0: no summary."""


@dataclass(frozen=True)
class Plan:
    evictions: dict[str, str]
    """Memory id -> why it goes (``ttl``, ``max_items`` or ``max_tokens``), first to go first."""
    summarize: bool
    """Whether a summary fits once the evictions are done."""


def summary_budget(max_tokens: int | None) -> int:
    """Tokens a summary may take: at most :data:`SUMMARY_MAX_TOKENS`, at most a quarter of the limit."""
    if max_tokens is None:
        return SUMMARY_MAX_TOKENS
    return max(1, min(SUMMARY_MAX_TOKENS, max_tokens // 4))


def _order(policy: Policy) -> Callable[[Memory], tuple[datetime, datetime, str]]:
    if policy == "lru":
        return lambda i: (i.last_accessed_at or i.created_at, i.created_at, i.id)
    return lambda i: (i.created_at, i.created_at, i.id)


def plan_eviction(items: Sequence[Memory], limits: Limits) -> Plan:
    """The memories to evict, first to go first, so ``items`` fit ``limits`` (summary included).

    Of each memory it reads only the id, tokens, pin and dates.
    """
    candidates = sorted((i for i in items if not i.pinned), key=_order(limits.policy))
    evictions: dict[str, str] = {}
    count = len(items)
    tokens = sum(i.tokens for i in items)
    if limits.policy == "ttl" and limits.ttl_cutoff is not None:
        for item in candidates:
            if item.created_at < limits.ttl_cutoff:
                evictions[item.id] = "ttl"
                count -= 1
                tokens -= item.tokens

    def over(with_summary: bool) -> str | None:
        extra_items, extra_tokens = (1, limits.summary_tokens) if with_summary else (0, 0)
        if limits.max_items is not None and count + extra_items > limits.max_items:
            return "max_items"
        if limits.max_tokens is not None and tokens + extra_tokens > limits.max_tokens:
            return "max_tokens"
        return None

    summarizing = limits.summary_tokens > 0
    for item in candidates:
        reason = over(summarizing and bool(evictions))
        if reason is None:
            break
        if item.id in evictions:
            continue
        evictions[item.id] = reason
        count -= 1
        tokens -= item.tokens
    return Plan(evictions=evictions, summarize=summarizing and bool(evictions) and over(True) is None)


def first_sentence(text: str, max_chars: int = 160) -> str:
    """The first sentence of ``text`` on one line, cut at ``max_chars``."""
    flat = " ".join(text.split())
    sentence = SENTENCE_END.split(flat, maxsplit=1)[0]
    return sentence if len(sentence) <= max_chars else sentence[: max_chars - 1].rstrip() + "…"


def extractive_summary(lines: Sequence[str], *, count: int, since: datetime, until: datetime) -> str:
    """One summary text from the first sentence of each evicted memory (oldest first)."""
    head = f"Summary of {count} earlier memories ({since:%Y-%m-%d} to {until:%Y-%m-%d}):"
    return " ".join([head, *(f"- {first_sentence(line)}" for line in lines)])


def truncate_to_tokens(text: str, spans: Sequence[tuple[int, int]], max_tokens: int) -> str:
    """``text`` cut after its ``max_tokens``-th token (``spans``: the tokens' character offsets)."""
    if len(spans) <= max_tokens:
        return text
    if max_tokens <= 0:
        return ""
    return text[: spans[max_tokens - 1][1]].rstrip()
