"""What the hooks inject, as the host builds it: which recalled memories clear the bar, cited lines
within budget, the session start's sections."""

from __future__ import annotations

from datetime import UTC, datetime

from hybrid_memory.models import Memory, MemoryKind, NoteType, RecallHit
from hybrid_memory.service.injection.prompt import HEADER, anchors, clears, prompt_parts, worth_showing
from hybrid_memory.service.injection.render import fit, line, sections
from hybrid_memory.service.injection.session import (
    EARLIER_HEADER,
    assemble,
    digest_lines,
    earlier_lines,
)
from hybrid_memory.text.filler import is_filler
from hybrid_memory.text.repeats import Distinct
from hybrid_memory.text.words import normalized

WHEN = datetime(2026, 11, 20, 10, tzinfo=UTC)


def _words(text: str) -> int:
    """A stand-in for the model's tokenizer: a token a word."""
    return len(text.split())


def _hit(memory_id: str, text: str, match: float, **fields: object) -> RecallHit:
    values: dict[str, object] = {
        "id": memory_id,
        "kind": MemoryKind.MESSAGE,
        "role": "user",
        "text": text,
        "match": match,
        "score": match,
        "created_at": WHEN,
        "channels": ["dense"],
        "ranks": {},
        "relevance": match,
        "recency": 1.0,
    }
    values.update(fields)
    return RecallHit.model_validate(values)


def _clearing(hits: list[RecallHit], prompt: str, bar: float, note_bar: float | None = None) -> list[str]:
    named = anchors(prompt)
    return [h.id for h in hits if clears(h, named, bar, bar if note_bar is None else note_bar)]


def test_anchors_are_the_names_a_prompt_is_about() -> None:
    assert anchors("When did Melanie paint a sunrise in May?") == {"melanie"}
    assert anchors("Why did we pick NATS over Kafka for the README example?") == {"nats", "kafka", "readme"}
    assert anchors("What is Gina's favourite dance?") == {"gina"}
    assert anchors("I think the deploy is broken, what did we do last time?") == set()


def test_a_prompt_naming_someone_gets_only_memories_that_name_them_unless_very_strong() -> None:
    hits = [
        _hit("a", "Melanie: I painted that lake sunrise last year!", 0.62),
        _hit("b", "Jon: I painted the fence on Sunday.", 0.7),
        _hit("c", "Painting sunrises over a lake is her favourite subject.", 0.85),
        _hit("d", "Melanie: see you soon", 0.4),
    ]
    assert _clearing(hits, "When did Melanie paint a sunrise?", 0.6) == ["a", "c"]
    assert _clearing(hits, "what did we paint on sunday?", 0.6) == ["a", "b", "c"]
    assert _clearing(hits, "When did Caroline paint a sunrise?", 0.9) == []


def test_a_note_is_injected_at_its_own_lower_bar() -> None:
    note = _hit("n", "Never push to main directly.", 0.2, kind=MemoryKind.NOTE, note_type=NoteType.DECISION)
    entity = _hit("e", "File push/main.py", 0.2, kind=MemoryKind.NOTE, note_type=NoteType.CONCEPT)
    hits = [_hit("m", "a turn about the deploy", 0.2), note, entity]
    assert _clearing(hits, "can I push to main", 0.3, 0.1) == ["n"]
    assert _clearing(hits, "can I push to main", 0.3) == []


def test_injected_lines_are_cited_cut_and_within_budget() -> None:
    lines = [
        line(f"m{i}", f"Decision {i}: " + "we keep the ledger on Postgres " * 20, "user") for i in range(6)
    ]
    text, shown = fit(HEADER, lines, 300, _words)
    rows = text.splitlines()
    assert rows[0].startswith("Possibly relevant memory from earlier sessions")
    assert [row.split("]")[0] for row in rows[1:]] == [f"- [memory:m{i}" for i in range(shown)]
    assert all(len(row) < 480 for row in rows[1:])
    assert _words(text) <= 300
    assert 0 < shown < len(lines)
    assert fit(HEADER, [], 300, _words) == ("", 0)


def test_an_injection_holds_no_filler_no_repeat_and_not_the_prompt_itself() -> None:
    question = "How do I regenerate the OpenAPI client?"
    hits = [
        _hit("q1", "How do I regenerate the OpenAPI client?", 0.99),
        _hit("a1", "Run `make openapi` from the root.", 0.7),
        _hit("q2", "how do I regenerate the openapi client ?", 0.98),
        _hit("a2", "Run `make openapi` from the root.", 0.7),
        _hit("f1", "Done.", 0.5),
        _hit("f2", "Let me look.", 0.5),
        _hit("a3", "Run  make openapi  from the root", 0.69),
        _hit("s1", "Asked: How do I regenerate the OpenAPI client?", 0.9, kind=MemoryKind.SUMMARY),
        _hit("s2", "Session s4-repeat: How do I regenerate the OpenAPI client?", 0.9),
    ]
    assert [h.id for h in worth_showing(hits, question)] == ["a1"]


def test_filler_is_a_short_acknowledgement_in_several_languages() -> None:
    for text in ("Done.", "Checking.", "Let me look.", "OK", "ok thanks!", "On it.", "Pronto.", "Erledigt"):
        assert is_filler(text), text
    for text in ("Yes!", "No.", "Done: the index is on invoices.customer_id.", "make test", "Postgres 16"):
        assert not is_filler(text), text
    assert normalized("  Run `make  openapi`!  ") == "run make openapi"


def test_session_start_sections_keep_their_order_and_share_what_one_leaves() -> None:
    notes = [f"- [memory:n{i}] (decision) rule number {i} " + "x " * 20 for i in range(20)]
    digest = ["- [memory:d] (2026-11-02) Asked: how to deploy", "- [memory:d] Open: the cache key"]
    core = ["- [memory:c] the on-call phone is 555-0100"]
    shown = sections(
        [("Rules:", notes), ("Last:", digest), ("Pinned:", core)], 400, (0.55, 0.3, 0.15), _words
    )
    assert [h for h, _ in shown] == ["Rules:", "Last:", "Pinned:"]
    assert shown[1][1] == digest
    assert shown[2][1] == core
    kept = shown[0][1]
    assert kept == notes[: len(kept)]
    assert len(kept) > 8  # the room digest and core did not use went to the notes
    used = sum(_words(h) + 2 + sum(_words(x) + 1 for x in lines) for h, lines in shown)
    assert used <= 400
    assert sections([("Rules:", []), ("Last:", [])], 400, (0.5, 0.5), _words) == []


def test_a_prompt_asking_two_things_is_recalled_as_two_questions() -> None:
    assert prompt_parts(
        "can I push the auth fix straight to main, and which database should the new invoices table go in?"
    ) == ["can I push the auth fix straight to main", "which database should the new invoices table go in"]
    assert prompt_parts("Where is the config? And who owns the deploy job?") == [
        "Where is the config",
        "And who owns the deploy job",
    ]
    single = "How do I regenerate the OpenAPI client after changing the billing schema?"
    assert prompt_parts(single) == [single]
    assert prompt_parts("Fix it? yes") == ["Fix it? yes"]


def test_the_digest_leaves_out_what_the_notes_above_it_say() -> None:
    text = (
        "Asked: We switch to Zustand. | Add the settings screen | "
        "Remember: always use pnpm, never npm.\n"
        "Open: unanswered: Remember: always use pnpm, never npm.\n"
        "Changed: edited app/store.ts; ran pnpm test (ok)\n"
        "Decided: We switch to Zustand.; Always use pnpm, never npm."
    )
    digest = Memory(
        id="d",
        kind=MemoryKind.SUMMARY,
        text=text,
        project="p",
        thread_id="s4",
        created_at=WHEN.replace(day=5),
    )
    distinct = Distinct("We switch to Zustand.", "Always use pnpm, never npm.")
    assert digest_lines(digest, distinct) == [
        "- [memory:d] (2026-11-05) Asked: Add the settings screen",
        "- [memory:d] Changed: edited app/store.ts; ran pnpm test (ok)",
    ]


def _digest(memory_id: str, day: int, text: str) -> Memory:
    return Memory(
        id=memory_id,
        kind=MemoryKind.SUMMARY,
        text=text,
        project="p",
        thread_id=f"s{day}",
        created_at=WHEN.replace(day=day),
    )


def test_earlier_sessions_are_one_dated_goal_line_each() -> None:
    earlier = [
        _digest(
            "e2",
            18,
            "Goal: Move the invoice export to a background job, and keep the CSV columns as they are "
            "today because finance parses them with a macro that nobody wants to touch again this year\n"
            "Changed: edited export.py; ran pytest (passed)",
        ),
        _digest("e1", 17, "Changed: edited README.md"),  # no goal: no line
        _digest("e0", 16, "Asked: Add the settings screen | fix the login redirect"),
    ]
    lines = earlier_lines(earlier, Distinct())
    assert lines[0].startswith("- [memory:e2] (2026-11-18) Move the invoice export to a background job")
    assert lines[0].endswith("…")  # compact: cut, the citation reads the rest
    assert len(lines[0]) < 200
    assert lines[1:] == ["- [memory:e0] (2026-11-16) Add the settings screen"]


def test_an_earlier_goal_already_shown_or_junk_is_left_out() -> None:
    shown = _digest("a", 12, "Goal: Add the settings screen")
    pasted = _digest(
        "b", 11, "Goal: Read the output file to retrieve the result: /private/tmp/tasks/b1.output"
    )
    assert earlier_lines([shown, pasted], Distinct("Add the settings screen")) == []


def test_an_earlier_goal_stating_what_a_later_note_superseded_is_left_out() -> None:
    stale = _digest("c", 10, "Goal: We use Postgres 16 for billing, not MySQL. Tests run with make test.")
    other = _digest("d", 9, "Goal: Add the settings screen")
    closed = ["we use postgres 16 for billing, not mysql"]
    assert earlier_lines([stale, other], Distinct(), closed) == [
        "- [memory:d] (2026-11-09) Add the settings screen"
    ]


def test_session_start_shows_earlier_goals_between_the_digest_and_core_within_budget() -> None:
    notes = [f"- [memory:n{i}] (decision) rule number {i} " + "x " * 20 for i in range(30)]
    digest = ["- [memory:d] (2026-11-20) Goal: add the cache", "- [memory:d] Open: the cache key"]
    earlier = ["- [memory:e1] (2026-11-19) Move the export to a job", "- [memory:e0] (2026-11-18) Fix login"]
    core = ["- [memory:c] the on-call phone is 555-0100"]
    text = assemble(notes, digest, core, 400, _words, earlier)
    assert _words(text) <= 400
    blocks = text.split("\n\n")
    assert [b.splitlines()[0] for b in blocks[1:]] == [
        "Rules and decisions in force (most important first):",
        "The most recent session:",
        EARLIER_HEADER,
        "Pinned:",
    ]
    assert blocks[3].splitlines()[1:] == earlier
    assert EARLIER_HEADER not in assemble(notes, digest, core, 400, _words)
