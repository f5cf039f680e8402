"""What both graph stores share about text and time, so they treat the same input the same way."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Protocol

from hybrid_memory.errors import NotFoundError
from hybrid_memory.models import Link, Note, NoteType

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


def _scope_and_times(item: Note | Link) -> dict[str, Any]:
    """What a note and a link both keep: their scope, when made, and when valid (times as text)."""
    return {
        "project": item.project,
        "user": item.user,
        "created": fmt_time(item.created),
        "valid_from": fmt_time_opt(item.valid_from),
        "valid_to": fmt_time_opt(item.valid_to),
    }


def note_fields(note: Note) -> dict[str, Any]:
    """A note as the flat fields both graph stores keep (times as text; tags left to the store)."""
    return {
        **_scope_and_times(note),
        "id": note.id,
        "content": note.content,
        "type": note.type.value,
        "importance": note.importance,
        "thread_id": note.thread_id,
        "modified": fmt_time(note.modified),
    }


class Fields(Protocol):
    """Anything read by field name: a dict, a Bolt record's map, an ``sqlite3.Row``."""

    def __getitem__(self, key: str, /) -> Any: ...


def note_from_fields(data: Fields, tags: list[str]) -> Note:
    """The note back from :func:`note_fields`' fields (a row or a map) and its decoded tags."""
    return Note(
        id=data["id"],
        project=data["project"],
        user=data["user"],
        content=data["content"],
        type=NoteType(data["type"]),
        tags=tags,
        importance=data["importance"],
        thread_id=data["thread_id"],
        created=datetime.fromisoformat(data["created"]),
        modified=datetime.fromisoformat(data["modified"]),
        valid_from=parse_time_opt(data["valid_from"]),
        valid_to=parse_time_opt(data["valid_to"]),
    )


def link_times(link: Link) -> dict[str, Any]:
    """A link's scope, ends, strength and times as the flat fields both graph stores keep."""
    return {
        **_scope_and_times(link),
        "from_id": link.from_id,
        "to_id": link.to_id,
        "strength": link.strength,
    }


def note_not_found(note_id: str) -> NotFoundError:
    """What every graph store raises for a note id that is not in the scope."""
    return NotFoundError(
        f"No note '{note_id}' in this project. create_note returns note ids; recall_memory finds them."
    )
