"""Every answer bounded: a token budget over the text the model reads, and the same cuts in the data.

A result's items are kept in order while their lines fit the budget; when they do not,
the long ones are cut first (each item gets a fair share, the short ones keep all of
theirs) and the last ones are left out. A cut text ends with a marker naming the
``read_memory`` call that reads on. The structured content carries the same cut items,
so neither rendering grows with what is stored. Pure functions over a tokenizer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from pydantic import BaseModel

from hybrid_memory.models import (
    ForgetPreview,
    Neighbourhood,
    NoteResult,
    PinResult,
    RecallResult,
    TaskResult,
    ThreadList,
)
from hybrid_memory.tools import render

DEFAULT_TOKENS = 2_000
MAX_TOKENS = 8_000
"""The hard cap a caller can raise the budget to: with the structured copy, under 25,000 tokens."""
MIN_TOKENS = 100
MIN_ITEM_TOKENS = 48
"""Below this share an item is no longer worth cutting: the last items are left out instead."""
MIN_CUT_TOKENS = 8
"""The least of its text a cut item keeps beside its marker: an item whose share leaves less is not cut,
since its marker (the ``read_memory`` call, some 35 tokens) would cost more than the text it replaces."""
CHARS_PER_TOKEN_GUESS = 8
"""Characters tokenized first per wanted token: twice English prose's, grown when too few."""

T = TypeVar("T", bound=BaseModel)


class Tokenizer(Protocol):
    """What measures a text: the embedding model's tokenizer (``Embedder``) satisfies it."""

    def count_tokens(self, text: str) -> int: ...

    def token_spans(self, text: str) -> list[tuple[int, int]]: ...


def most_tokens(text: str) -> int:
    """An upper bound on ``text``'s tokens that needs no tokenizer: its UTF-8 length.

    Every token covers at least one byte of the text (WordPiece, byte-level BPE and
    :func:`~hybrid_memory.embeddings.chunking.approximate_token_spans` alike). Tokenizing
    holds the GIL for the whole text, and most answers fit their budget by this bound alone.
    """
    return len(text.encode())


def count_within(text: str, limit: int, tokens: Tokenizer) -> int:
    """``text``'s tokens, or :func:`most_tokens` when that is already within ``limit``."""
    bound = most_tokens(text)
    return bound if bound <= limit else tokens.count_tokens(text)


def _head_spans(text: str, max_tokens: int, tokens: Tokenizer) -> tuple[list[tuple[int, int]], int]:
    """The token spans of a head of ``text`` holding more than ``max_tokens`` tokens, or of all of it.

    Returns the spans and the head's length. The head starts at a few characters a token and
    grows until it holds enough, so a 90,000-character text is never tokenized whole.
    """
    size = max(max_tokens, 1) * CHARS_PER_TOKEN_GUESS
    while True:
        head = text[:size]
        spans = tokens.token_spans(head)
        if len(spans) > max_tokens or size >= len(text):
            return spans, len(head)
        size *= 4


def prefix_end(text: str, max_tokens: int, tokens: Tokenizer) -> int:
    """The index just past ``text``'s first ``max_tokens`` tokens (``len(text)`` if it has no more)."""
    spans, head = _head_spans(text, max_tokens, tokens)
    return spans[max_tokens][0] if len(spans) > max_tokens else head


def _marker(memory_id: str, end: int, total: int) -> str:
    return f' […{total - end} more chars: read_memory(memory_id="{memory_id}", offset={end})]'


def cut(text: str, max_tokens: int, tokens: Tokenizer, memory_id: str) -> str:
    """``text`` within ``max_tokens`` tokens, its marker included; unchanged when it fits."""
    if most_tokens(text) <= max_tokens:
        return text
    spans, _ = _head_spans(text, max_tokens, tokens)
    if len(spans) <= max_tokens:
        return text
    keep = max(max_tokens - tokens.count_tokens(_marker(memory_id, len(text), len(text))), 1)
    end = spans[keep][0]
    return text[:end].rstrip() + _marker(memory_id, end, len(text))


def water_level(costs: Sequence[int], budget: int) -> int | None:
    """The largest per-item cap ``c`` with ``sum(min(cost, c)) <= budget``; None when all fit whole."""
    if sum(costs) <= budget:
        return None
    remaining = budget
    ordered = sorted(costs)
    for i, cost in enumerate(ordered):
        left = len(ordered) - i
        if cost * left > remaining:
            return remaining // left
        remaining -= cost
    return None  # pragma: no cover - the sum check above returns first


@dataclass(frozen=True)
class Lines:
    """How one item type renders and how its text is cut; ``field=None``: its lines are never cut."""

    line: Callable[[Any], str]
    field: str | None = None
    memory_id: Callable[[Any], str] = lambda item: str(item.id)


@dataclass(frozen=True)
class Fitted:
    items: list[Any]
    omitted: int


def fit(items: Sequence[T], budget: int, tokens: Tokenizer, lines: Lines) -> Fitted:
    """The items whose lines fit ``budget`` tokens: the long ones cut to a fair share, the last left out."""
    if sum(most_tokens(lines.line(item)) + 1 for item in items) <= budget:
        return Fitted(list(items), 0)
    # A line longer than the whole budget costs budget + 1: it is cut whatever its length.
    costs = [min(len(_head_spans(lines.line(item), budget, tokens)[0]), budget + 1) + 1 for item in items]
    field = lines.field
    overheads: dict[int, int] = {}
    for n in range(len(items), 0, -1):
        level = water_level(costs[:n], budget)
        if level is None:
            return Fitted(list(items[:n]), len(items) - n)
        if field is None or (level < MIN_ITEM_TOKENS and n > 1):
            continue
        over = [i for i in range(n) if costs[i] > level]
        for i in over:
            if i not in overheads:
                overheads[i] = _overhead(items[i], field, tokens, lines)
        # An item is cut only where the level leaves room for its marker and some of its text; else
        # fewer items are kept, each with more room.
        if n > 1 and any(level - overheads[i] < MIN_CUT_TOKENS for i in over):
            continue
        kept = [
            _cut_item(item, field, level - overheads[i], tokens, lines) if cost > level else item
            for i, (item, cost) in enumerate(zip(items[:n], costs, strict=False))
        ]
        return Fitted(kept, len(items) - n)
    return Fitted([], len(items))


def _overhead(item: T, field: str, tokens: Tokenizer, lines: Lines) -> int:
    """What a cut ``item`` costs besides its kept text: its line without the text, and the marker."""
    text = getattr(item, field)
    marker = _marker(lines.memory_id(item), len(text), len(text))
    return tokens.count_tokens(lines.line(item.model_copy(update={field: ""})) + marker) + 1


def _cut_item(item: T, field: str, room: int, tokens: Tokenizer, lines: Lines) -> T:
    """``item`` with its text cut to ``room`` tokens besides its marker."""
    text = getattr(item, field)
    marker = tokens.count_tokens(_marker(lines.memory_id(item), len(text), len(text)))
    return item.model_copy(update={field: cut(text, max(room, 1) + marker, tokens, lines.memory_id(item))})


def _cut_field(result: T, field: str, budget: int, tokens: Tokenizer, memory_id: str) -> T:
    return result.model_copy(update={field: cut(getattr(result, field), budget, tokens, memory_id)})


def bound(
    result: BaseModel, budget: int, tokens: Tokenizer, args: Mapping[str, Any]
) -> tuple[BaseModel, int]:
    """``result`` within ``budget`` tokens of rendered text, and how many items were left out.

    ``args`` are the call's arguments: a left-out page tail moves the next page's offset.
    """
    if isinstance(result, RecallResult):
        explain = bool(args.get("explain", False))
        fitted = fit(result.results, budget, tokens, Lines(lambda h: render.hit_line(h, explain), "text"))
        return result.model_copy(update={"results": fitted.items}), fitted.omitted
    if isinstance(result, Neighbourhood):
        return _bound_neighbourhood(result, budget, tokens)
    if isinstance(result, ThreadList):
        fitted = fit(result.threads, budget, tokens, Lines(lambda t: f"{t.thread_id}: {t.memories} memories"))
        if not fitted.omitted:
            return result, 0
        next_offset = int(args.get("offset", 0)) + len(fitted.items)
        return result.model_copy(update={"threads": fitted.items, "next_offset": next_offset}), 0
    if isinstance(result, ForgetPreview):
        fitted = fit(result.items, budget, tokens, Lines(render.preview_line, "text"))
        if not fitted.omitted:
            return result, 0
        start = int(args.get("cursor") or 0)
        update = {"items": fitted.items, "next_cursor": str(start + len(fitted.items))}
        return result.model_copy(update=update), 0
    if isinstance(result, NoteResult):
        return _cut_field(result, "content", budget, tokens, result.id), 0
    if isinstance(result, PinResult | TaskResult):
        return _cut_field(result, "text", budget, tokens, result.id), 0
    return result, 0


def _bound_neighbourhood(result: Neighbourhood, budget: int, tokens: Tokenizer) -> tuple[BaseModel, int]:
    """The notes first; the links among the kept notes in what is left, at least a quarter of the budget."""
    link_share = budget // 4 if result.links else 0
    notes = fit(result.notes, budget - link_share, tokens, Lines(render.note_line, "content"))
    kept = {n.id for n in notes.items}
    among = [link for link in result.links if link.from_id in kept and link.to_id in kept]
    used = sum(tokens.count_tokens(render.note_line(n)) + 1 for n in notes.items)
    links = fit(among, max(budget - used - 2, 0), tokens, Lines(render.link_line, memory_id=lambda _: ""))
    update = {"notes": notes.items, "links": links.items}
    return result.model_copy(update=update), notes.omitted + links.omitted
