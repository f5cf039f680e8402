"""The text the model reads: one compact line per item, each citing ``[memory:<id>]``.

Pure functions from a tool's pydantic result to text. The structured content keeps
every field; this rendering leaves out empty fields and, unless ``explain`` is set,
why a hit ranked. A result type without a renderer here falls back to compact JSON
without nulls, so a new result type is never silent.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import datetime
from typing import Any

from pydantic import BaseModel

from hybrid_memory import codestate
from hybrid_memory.models import (
    CleanupResult,
    ForgetPreview,
    ForgetResult,
    Link,
    MemoryContext,
    MemoryKind,
    MemoryPage,
    MemoryStats,
    Neighbourhood,
    Note,
    NoteResult,
    PinResult,
    PreviewItem,
    RecallHit,
    RecallResult,
    RememberResult,
    TaskResult,
    ThreadList,
)
from hybrid_memory.text.citation import cite

LISTED_IDS = 20
"""Ids a write's summary line lists; the structured content has them all."""


def day(value: datetime | None) -> str:
    return "" if value is None else value.date().isoformat()


def _join(*parts: str | None) -> str:
    return " ".join(p for p in parts if p)


def _body(text: str) -> str:
    """The item's text on its line; continuation lines indented so each item still reads as one."""
    return text.strip().replace("\n", "\n  ")


def _tags(tags: Iterable[str]) -> str:
    return " ".join(f"#{t}" for t in tags)


def _counts(counts: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())


def _label(kind: MemoryKind, role: str | None, note_type: str | None) -> str:
    if kind is MemoryKind.MESSAGE:
        return role or "message"
    if kind is MemoryKind.NOTE and note_type:
        return f"{note_type} note"
    return str(kind)


def hit_line(hit: RecallHit, explain: bool = False) -> str:
    """``[memory:<id>] [weak match:] <role or kind> <day> in <thread>: text``; with explain, why it ranked."""
    head = _join(
        cite(hit.id),
        WEAK if hit.weak else None,
        _label(hit.kind, hit.role, hit.note_type),
        day(hit.created_at),
        f"in {hit.thread_id}" if hit.thread_id else None,
        "pinned" if hit.pinned else None,
        f"ended {day(hit.valid_to)}" if hit.valid_to else None,
        _tags(hit.tags),
    )
    line = _join(f"{head}: {_body(hit.text)}", codestate.note(hit.changed, hit.branch))
    if explain:
        ranks = " ".join(f"{channel}#{hit.ranks.get(channel, '-')}" for channel in hit.channels)
        line += f" (score {hit.score:.2f}; {ranks}; relevance {hit.relevance:.2f}, recency {hit.recency:.2f})"
    return line


def recall_text(result: RecallResult, explain: bool = False, omitted: int = 0) -> str:
    """One line per hit, weak ones marked; when every hit is weak, a first line says nothing matched well."""
    lines = [hit_line(h, explain) for h in result.results] or ["No memories matched."]
    if result.results and all(h.weak for h in result.results):
        lines.insert(0, NOTHING_STRONG)
    if result.skipped_channels:
        lines.append(f"Not searched: {_counts_text(result.skipped_channels)}.")
    lines.append(omitted_line(omitted, "hits"))
    return _lines(lines)


WEAK = "weak match:"
"""Marks a hit whose own text matched the query poorly (``RecallHit.weak``): probably unrelated."""
NOTHING_STRONG = "Nothing stored matches this well; every hit below is a weak match, probably unrelated."


def _counts_text(reasons: dict[str, str]) -> str:
    return "; ".join(f"{k} ({v})" for k, v in reasons.items())


def omitted_line(omitted: int, what: str) -> str:
    if not omitted:
        return ""
    return f"{omitted} more {what} left out to stay within max_tokens; raise it or narrow the call."


def _lines(lines: Iterable[str]) -> str:
    return "\n".join(line for line in lines if line)


def note_line(note: Note) -> str:
    head = _join(
        cite(note.id),
        f"{note.type} note",
        day(note.created),
        f"in {note.thread_id}" if note.thread_id else None,
        f"ended {day(note.valid_to)}" if note.valid_to else None,
        _tags(note.tags),
    )
    return f"{head}: {_body(note.content)}"


def link_line(link: Link) -> str:
    strength = f" ({link.strength:g})" if link.strength != 1.0 else ""
    ended = f" ended {day(link.valid_to)}" if link.valid_to else ""
    return f"{link.from_id} -{link.relation}-> {link.to_id}{strength}{ended}"


def neighbourhood_text(result: Neighbourhood, omitted: int = 0) -> str:
    lines = [note_line(n) for n in result.notes]
    if result.links:
        lines.append("Links:")
        lines.extend(link_line(link) for link in result.links)
    lines.append(omitted_line(omitted, "notes or links"))
    return _lines(lines)


def note_result_text(result: NoteResult) -> str:
    flags = [
        f"duplicate of a live note (similarity {result.similarity:.2f}); nothing new stored, "
        "force=true stores anyway"
        if result.duplicate and result.similarity is not None
        else None,
        f"{result.redacted} secrets redacted" if result.redacted else None,
        "pinned" if result.pinned else None,
        "private" if result.private else None,
        f"expires {day(result.expires_at)}" if result.expires_at else None,
    ]
    extra = "; ".join(f for f in flags if f)
    return note_line(result) + (f"\n({extra})" if extra else "")


def link_text(link: Link) -> str:
    return f"Linked {link_line(link)}"


def remember_text(result: RememberResult) -> str:
    parts = [
        f"Thread {result.thread_id}: {result.stored} messages stored, {result.unchanged} unchanged, "
        f"{result.chunks} memories written",
        _skipped(result),
        f"{result.redacted} secrets redacted" if result.redacted else None,
        f"{result.ids_replaced} ids replaced by ones derived from them" if result.ids_replaced else None,
        f"{result.evicted} older memories evicted" if result.evicted else None,
    ]
    return "; ".join(p for p in parts if p) + "."


def _skipped(result: RememberResult) -> str | None:
    counts = [
        f"{result.skipped_messages} messages" if result.skipped_messages else "",
        f"{result.skipped_blocks} parts" if result.skipped_blocks else "",
    ]
    what = " and ".join(c for c in counts if c)
    return f"skipped {what} ({_counts(result.skipped_reasons)})" if what else None


def threads_text(result: ThreadList) -> str:
    lines = [f"{t.thread_id}: {t.memories} memories" for t in result.threads] or ["No threads remembered."]
    if result.next_offset is not None:
        lines.append(f"More: list_threads(offset={result.next_offset}).")
    return _lines(lines)


def _ids(ids: list[str], more: int = 0) -> str:
    listed = ", ".join(ids[:LISTED_IDS])
    rest = len(ids) - min(len(ids), LISTED_IDS) + more
    return f": {listed}" + (f" and {rest} more" if rest else "") if ids else ""


def forget_text(result: ForgetResult) -> str:
    return (
        f"Deleted {result.deleted_memories} memories and {result.deleted_notes} notes"
        f"{_ids(result.ids, result.more_ids)}."
    )


def pin_text(result: PinResult) -> str:
    state = "pinned (core memory)" if result.pinned else "unpinned"
    already = "" if result.changed else " already"
    return f"{cite(result.id)} {result.kind}{already} {state}: {_body(result.text)}"


def context_text(result: MemoryContext) -> str:
    body = result.text.strip() or "Nothing remembered yet for this project."
    more = f"\n({result.omitted} more left out to stay within max_tokens.)" if result.omitted else ""
    return body + more


def task_text(result: TaskResult) -> str:
    outcome = "success" if result.success else "failure"
    redacted = f" ({result.redacted} secrets redacted)" if result.redacted else ""
    return f"{cite(result.id)} task {outcome}: {_body(result.text)}{redacted}"


def preview_line(item: PreviewItem) -> str:
    return f"{cite(item.id)} {item.kind} {day(item.created_at)} {item.reason}: {_body(item.text)}"


def preview_text(result: ForgetPreview) -> str:
    summary = " (the evicted ones replaced by one summary)" if result.summarized else ""
    lines = [f"cleanup_memory would remove {result.total}{summary}."]
    lines.extend(preview_line(i) for i in result.items)
    if result.next_cursor is not None:
        lines.append(f'More: forget_preview(cursor="{result.next_cursor}").')
    return _lines(lines)


def cleanup_text(result: CleanupResult) -> str:
    summary = f"; summary {cite(result.summary_id)}" if result.summary_id else ""
    return f"Deleted {result.deleted} expired, evicted {result.evicted}{summary}{_ids(result.ids)}."


def stats_text(result: MemoryStats) -> str:
    kinds = ", ".join(f"{k.kind} {k.count} ({k.tokens} tokens)" for k in result.by_kind if k.count)
    limits = result.limits
    limit_parts = [
        f"max_items {limits.max_items}" if limits.max_items is not None else None,
        f"max_tokens {limits.max_tokens}" if limits.max_tokens is not None else None,
        f"ttl {limits.ttl_days:g} days" if limits.ttl_days is not None else None,
        f"retention {limits.retention_days:g} days" if limits.retention_days is not None else None,
    ]
    set_limits = ", ".join(p for p in limit_parts if p)
    rate = f", hit rate {result.recall_hit_rate:.2f}" if result.recall_hit_rate is not None else ""
    return _lines(
        [
            f"Project {result.project}: {result.items} memories, {result.tokens} tokens"
            + (f" ({kinds})" if kinds else "")
            + f"; {result.notes} notes; {result.pinned} pinned; {result.private} private.",
            f"Limits: {set_limits} ({limits.eviction_policy} eviction)." if set_limits else "",
            f"Since start: {result.recalls} recalls{rate}; {result.evictions} evicted, "
            f"{result.deleted_expired} expired deleted, {result.summaries_written} summaries written.",
        ]
    )


def page_text(page: MemoryPage) -> str:
    head = _join(
        cite(page.id),
        _label(page.kind, page.role, page.note_type),
        day(page.created_at),
        f"in {page.thread_id}" if page.thread_id else None,
        f"chars {page.offset}-{page.offset + len(page.text)} of {page.total_chars}",
    )
    more = (
        f'\n[continues: read_memory(memory_id="{page.id}", offset={page.next_offset})]'
        if page.next_offset is not None
        else ""
    )
    return f"{head}:\n{page.text}{more}"


def fallback_text(result: BaseModel) -> str:
    return result.model_dump_json(exclude_none=True)


_SIMPLE: dict[type[BaseModel], Callable[[Any], str]] = {
    NoteResult: note_result_text,
    Link: link_text,
    RememberResult: remember_text,
    ForgetResult: forget_text,
    PinResult: pin_text,
    MemoryContext: context_text,
    TaskResult: task_text,
    CleanupResult: cleanup_text,
    MemoryStats: stats_text,
    MemoryPage: page_text,
    ThreadList: threads_text,
    ForgetPreview: preview_text,
}


def render(result: BaseModel, *, explain: bool = False, omitted: int = 0) -> str:
    """The model's text for a tool result; ``omitted``: items the budget left out."""
    if isinstance(result, RecallResult):
        return recall_text(result, explain, omitted)
    if isinstance(result, Neighbourhood):
        return neighbourhood_text(result, omitted)
    for result_type, renderer in _SIMPLE.items():
        if isinstance(result, result_type):
            return renderer(result)
    return fallback_text(result)
