"""Read a whole import file before anything is written: an :class:`ImportPlan` or every problem.

Our own format is read more than once: here to validate every line (keeping only ids
and counts, so a large export with embeddings is never held in memory), then by the
writer, which trusts it (once for the memories' context, once to write). A
``memory.jsonl`` is small and converted whole.

Every item the writer reads has its secrets redacted, as the tools redact what they
store: a file made by another server, or by a version of ours that knew fewer kinds of
secret, stores no secret here. A memory whose text changed loses the file's embedding,
which was made from the secret, and is embedded again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from hybrid_memory.models import Memory, Note, Scope
from hybrid_memory.service.redaction import redact
from hybrid_memory.transfer.format import (
    MAX_PROBLEMS,
    EmbeddingInfo,
    ImportFileError,
    Item,
    parse_header,
    parse_item,
    read_lines,
    scope_of,
)
from hybrid_memory.transfer.mcp_memory import looks_like_mcp_memory, read_mcp_memory

SourceFormat = Literal["hybrid-memory", "mcp-memory"]
Entry = tuple[Item, list[float] | None]


@dataclass
class ImportPlan:
    """A validated file: what it holds and how to read its items again."""

    source: SourceFormat
    embedding: EmbeddingInfo | None
    scopes: list[Scope]
    counts: dict[str, int]
    entries: Callable[[], Iterator[Entry]]
    """Every item (with a memory's embedding, if any), in file order; callable again."""
    outside: dict[tuple[Scope, str], int] = field(default_factory=dict)
    """Note ids that links need but the file does not hold -> the first line needing it.

    They must already be in the target store; the importer checks before writing.
    """

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def detect_format(path: Path) -> SourceFormat:
    """Ours when the first line is our header, ``mcp-memory`` when it is an entity or relation."""
    for _, text in read_lines(path):
        return "mcp-memory" if looks_like_mcp_memory(text) else "hybrid-memory"
    raise ImportFileError(path, ["the file is empty"])


def read_plan(path: Path, source: SourceFormat | None, scope: Scope) -> ImportPlan:
    """Validate ``path`` whole; ``scope`` is where a ``memory.jsonl`` goes (ours names its own scopes)."""
    try:
        source = source or detect_format(path)
        if source == "mcp-memory":
            notes, links = read_mcp_memory(path, scope)
            entries: list[Entry] = [(note, None) for note in notes]
            entries += [(link, None) for link in links]
            return ImportPlan(
                source=source,
                embedding=None,
                scopes=[scope] if entries else [],
                counts={"memory": 0, "note": len(notes), "link": len(links)},
                entries=lambda: map(redacted, entries),
            )
        return _read_export(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise ImportFileError(path, [f"cannot be read: {exc}"]) from exc


def _read_export(path: Path) -> ImportPlan:
    problems: list[str] = []
    bad = 0

    def problem(number: int, text: str) -> None:
        nonlocal bad
        bad += 1
        if len(problems) < MAX_PROBLEMS:
            problems.append(f"line {number}: {text}")

    lines = read_lines(path)
    first = next(lines, None)
    if first is None:
        raise ImportFileError(path, ["the file is empty"])
    try:
        header = parse_header(first[1])
    except ValueError as exc:
        raise ImportFileError(path, [f"line {first[0]}: {exc}"]) from None
    declared = set(header.scopes)
    dimension = header.embedding.dimension if header.embedding else None
    counts = {"memory": 0, "note": 0, "link": 0}
    first_lines: dict[str, dict[object, int]] = {kind: {} for kind in counts}
    note_scopes: dict[str, Scope] = {}

    def once(kind: str, key: object, what: str, number: int) -> None:
        """Count an item of ``kind``; a ``key`` seen before is a problem naming its first line."""
        counts[kind] += 1
        seen = first_lines[kind]
        if key in seen:
            problem(number, f"{what} already appears on line {seen[key]}")
        seen.setdefault(key, number)

    needed: dict[tuple[Scope, str], int] = {}
    for number, text in lines:
        try:
            item, embedding = parse_item(text)
        except ValueError as exc:
            problem(number, str(exc))
            continue
        scope = scope_of(item)
        if scope not in declared:
            problem(number, f"scope (project {scope.project!r}, user {scope.user!r}) is not in the header")
        if isinstance(item, Memory):
            once("memory", item.id, f"memory {item.id}", number)
            if embedding is not None and dimension is None:
                problem(number, "memory has an embedding but the header names no embedding model")
            elif embedding is not None and len(embedding) != dimension:
                problem(number, f"embedding has {len(embedding)} dimensions; the header says {dimension}")
        elif isinstance(item, Note):
            once("note", item.id, f"note {item.id}", number)
            note_scopes.setdefault(item.id, scope)
        else:
            once("link", (scope, item.from_id, item.to_id, item.relation.value), "the same link", number)
            if item.from_id == item.to_id:
                problem(number, "link joins a note to itself; a link joins two different notes")
            for end in (item.from_id, item.to_id):
                needed.setdefault((scope, end), number)
    outside: dict[tuple[Scope, str], int] = {}
    for (scope, note_id), number in needed.items():
        if note_id not in note_scopes:
            outside[(scope, note_id)] = number
        elif note_scopes[note_id] != scope:
            problem(number, f"link endpoint {note_id} is a note of another scope")
    if problems:
        raise ImportFileError(path, sorted(problems, key=_line_number), bad - len(problems))
    return ImportPlan(
        source="hybrid-memory",
        embedding=header.embedding,
        scopes=sorted(declared, key=lambda s: (s.project, s.user)),
        counts=counts,
        entries=lambda: map(redacted, _entries(path)),
        outside=outside,
    )


def _line_number(problem: str) -> int:
    return int(problem.split(":", 1)[0].removeprefix("line "))


def redacted(entry: Entry) -> Entry:
    """``entry`` with its text and tags redacted; a memory whose text changed loses its vector."""
    item, embedding = entry
    if isinstance(item, Memory | Note):
        field_name = "text" if isinstance(item, Memory) else "content"
        text = getattr(item, field_name)
        clean, tags = redact(text).text, [redact(tag).text for tag in item.tags]
        if clean != text or tags != item.tags:
            item = item.model_copy(update={field_name: clean, "tags": tags})
            embedding = None if clean != text else embedding
    return item, embedding


def _entries(path: Path) -> Iterator[Entry]:
    lines = read_lines(path)
    next(lines, None)  # the header
    for _, text in lines:
        yield parse_item(text)
