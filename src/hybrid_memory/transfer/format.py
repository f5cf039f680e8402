"""The export format (JSON Lines, version 1) as pydantic models, and its line-by-line reader.

``docs/export-format.md`` is the reference for users; this module is the reference for
code. A file is a header line, then one line per memory, note or link. Every line is
validated on its own (so an error names its line), then the file as a whole (duplicate
ids, links to notes that are not there, scopes missing from the header).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from hybrid_memory.errors import InvalidInputError
from hybrid_memory.models import Link, Memory, Note, Scope

FORMAT_NAME = "mcp-hybrid-memory"
FORMAT_VERSION = 1
MAX_PROBLEMS = 20
"""A broken file can have an error on every line; the first ones are enough to fix it."""


class EmbeddingInfo(BaseModel):
    """The model whose vectors the file's ``embedding`` fields hold."""

    model: str
    dimension: int = Field(ge=1)


class Header(BaseModel):
    """The first line of an export. Unknown fields are ignored, as on every line."""

    format: Literal["mcp-hybrid-memory"]
    version: Literal[1]
    exported_at: datetime
    embedding: EmbeddingInfo | None = None
    """None when the source had no vector store; embeddings are only present with --with-embeddings."""
    scopes: list[Scope]
    counts: dict[str, int] = Field(default_factory=dict)
    """Informative: items per type written, private items skipped."""


Item = Memory | Note | Link
"""What a file holds once read: the stored models themselves."""

ITEM_KEY = "item"
"""The key naming a line's kind. Not ``type``: a note has a ``type`` field of its own."""

_MODELS: dict[str, type[Memory] | type[Note] | type[Link]] = {"memory": Memory, "note": Note, "link": Link}
_EMBEDDING: TypeAdapter[list[float] | None] = TypeAdapter(list[float] | None)


class ImportFileError(InvalidInputError):
    """The file is not a valid export: ``problems`` lists ``line N: what is wrong``. Nothing was written."""

    def __init__(self, path: Path, problems: list[str], more: int = 0) -> None:
        self.problems = problems
        listed = "\n  ".join(problems)
        tail = f"\n  ... and {more} more" if more else ""
        super().__init__(f"{path} was not imported (nothing was written):\n  {listed}{tail}")


def describe(exc: ValidationError) -> str:
    """A pydantic error as one short line: ``field: message; field: message``."""
    parts = []
    for error in exc.errors(include_url=False):
        where = ".".join(str(p) for p in error["loc"]) or "line"
        parts.append(f"{where}: {error['msg']}")
    return "; ".join(parts)


def scope_of(item: Item) -> Scope:
    return Scope(project=item.project, user=item.user)


def header_line(header: Header) -> str:
    return header.model_dump_json(exclude_none=False)


def kind_of(item: Item) -> Literal["memory", "note", "link"]:
    """What an item line names it: ``memory``, ``note`` or ``link``."""
    return "memory" if isinstance(item, Memory) else "note" if isinstance(item, Note) else "link"


def item_line(item: Item, embedding: list[float] | None = None) -> str:
    """One line of the file for a stored item; ``embedding`` only for a memory."""
    data: dict[str, object] = {ITEM_KEY: kind_of(item), **item.model_dump(mode="json")}
    if embedding is not None:
        data["embedding"] = embedding
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) of every non-blank line."""
    with path.open(encoding="utf-8") as f:
        for number, text in enumerate(f, start=1):
            if text.strip():
                yield number, text


def parse_header(text: str) -> Header:
    """The header, or ``ValueError`` saying what is wrong with it."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise ValueError(f'the first line must be the header {{"format": "{FORMAT_NAME}", ...}}')
    if data.get("version") != FORMAT_VERSION:
        raise ValueError(
            f"format version {data.get('version')!r} is not supported; this hybrid-memory reads "
            f"version {FORMAT_VERSION}. Upgrade mcp-hybrid-memory."
        )
    try:
        return Header.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"header: {describe(exc)}") from None


def parse_item(text: str) -> tuple[Item, list[float] | None]:
    """One item line as the stored model (and a memory's embedding), or ``ValueError``."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ValueError("each line must be a JSON object")
    kind = data.pop(ITEM_KEY, None)
    model = _MODELS.get(kind) if isinstance(kind, str) else None
    if model is None:
        raise ValueError(f'unknown item {kind!r}; "{ITEM_KEY}" is "memory", "note" or "link" on every line')
    try:
        embedding = _EMBEDDING.validate_python(data.pop("embedding", None))
        item = model.model_validate(data)
    except ValidationError as exc:
        raise ValueError(f"{kind}: {describe(exc)}") from None
    if embedding is not None and not isinstance(item, Memory):
        raise ValueError(f"{kind}: only a memory carries an embedding")
    if isinstance(item, Memory) and not _is_uuid(item.id):
        raise ValueError(f"memory: id: {item.id!r} is not a UUID (memory ids are UUIDs)")
    return item, embedding


def _is_uuid(value: str) -> bool:
    try:
        uuid.UUID(value)
    except ValueError:
        return False
    return True
