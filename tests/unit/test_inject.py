"""What the hooks inject: which recalled memories are strong enough, cited lines within budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hybrid_memory.integrations.config import HookConfig, estimate_tokens
from hybrid_memory.integrations.inject import (
    _digest_lines,
    _sections,
    anchors,
    cited,
    prompt_parts,
    render_prompt_context,
    strong_matches,
    worth_showing,
)
from hybrid_memory.text.filler import is_filler
from hybrid_memory.text.repeats import Distinct
from hybrid_memory.text.words import normalized

CONFIG = HookConfig(
    data_dir=Path("/nowhere"),
    project=None,
    context_tokens=800,
    prompt_tokens=300,
    min_match=0.6,
    timeout_s=1,
    detach=False,
)


def _hit(memory_id: str, text: str, match: float) -> dict[str, Any]:
    return {
        "id": memory_id,
        "kind": "message",
        "role": "user",
        "text": text,
        "match": match,
        "created_at": "2026-11-20T10:00:00Z",
    }


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
    assert [h["id"] for h in strong_matches(hits, "When did Melanie paint a sunrise?", 0.6)] == ["a", "c"]
    assert [h["id"] for h in strong_matches(hits, "what did we paint on sunday?", 0.6)] == ["a", "b", "c"]
    assert strong_matches(hits, "When did Caroline paint a sunrise?", 0.9) == []


def test_injected_lines_are_cited_cut_and_within_budget() -> None:
    hits = [_hit(f"m{i}", f"Decision {i}: " + "we keep the ledger on Postgres " * 20, 0.9) for i in range(6)]
    text, shown = render_prompt_context(CONFIG, hits)
    lines = text.splitlines()
    assert lines[0].startswith("Possibly relevant memory from earlier sessions")
    assert [line.split("]")[0] for line in lines[1:]] == [f"- [memory:m{i}" for i in range(len(shown))]
    assert all(len(line) < 480 for line in lines[1:])
    assert estimate_tokens(text) <= CONFIG.prompt_tokens
    assert 0 < len(shown) < len(hits)


def test_nothing_strong_enough_injects_nothing() -> None:
    assert render_prompt_context(CONFIG, []) == ("", [])


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
        _hit("s1", "Asked: How do I regenerate the OpenAPI client?", 0.9),
        _hit("s2", "Session s4-repeat: How do I regenerate the OpenAPI client?", 0.9),
    ]
    assert [h["id"] for h in worth_showing(hits, question)] == ["a1"]


def test_filler_is_a_short_acknowledgement_in_several_languages() -> None:
    for text in ("Done.", "Checking.", "Let me look.", "OK", "ok thanks!", "On it.", "Pronto.", "Erledigt"):
        assert is_filler(text), text
    for text in ("Yes!", "No.", "Done: the index is on invoices.customer_id.", "make test", "Postgres 16"):
        assert not is_filler(text), text
    assert normalized("  Run `make  openapi`!  ") == "run make openapi"


def test_session_start_sections_keep_their_order_and_share_what_one_leaves() -> None:
    notes = [f"- [memory:n{i}] (decision) rule number {i} " + "x" * 80 for i in range(20)]
    digest = ["- [memory:d] (2026-11-02) Asked: how to deploy", "- [memory:d] Open: the cache key"]
    core = ["- [memory:c] the on-call phone is 555-0100"]
    shown = _sections([("Rules:", notes), ("Last:", digest), ("Pinned:", core)], 400, (0.55, 0.3, 0.15))
    assert [h for h, _ in shown] == ["Rules:", "Last:", "Pinned:"]
    assert shown[1][1] == digest
    assert shown[2][1] == core
    kept = shown[0][1]
    assert kept == notes[: len(kept)]
    assert len(kept) > 8  # the room digest and core did not use went to the notes
    used = sum(estimate_tokens(h) + 2 + sum(estimate_tokens(x) + 1 for x in lines) for h, lines in shown)
    assert used <= 400
    assert _sections([("Rules:", []), ("Last:", [])], 400, (0.5, 0.5)) == []


def test_the_ids_an_injection_cites_are_listed_once() -> None:
    assert cited("- [memory:a-1] x\n- [memory:b] y [memory:a-1]") == ["a-1", "b"]


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


def test_a_note_is_injected_at_its_own_lower_bar() -> None:
    note = {**_hit("n", "Never push to main directly.", 0.2), "kind": "note", "note_type": "decision"}
    entity = {**_hit("e", "File push/main.py", 0.2), "kind": "note", "note_type": "concept"}
    hits = [_hit("m", "a turn about the deploy", 0.2), note, entity]
    assert [h["id"] for h in strong_matches(hits, "can I push to main", 0.3, 0.1)] == ["n"]
    assert strong_matches(hits, "can I push to main", 0.3) == []


def test_the_digest_leaves_out_what_the_notes_above_it_say() -> None:
    class Host:
        def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
            text = (
                "Asked: We switch to Zustand. | Add the settings screen | "
                "Remember: always use pnpm, never npm.\n"
                "Open: unanswered: Remember: always use pnpm, never npm.\n"
                "Changed: edited app/store.ts; ran pnpm test (ok)\n"
                "Decided: We switch to Zustand.; Always use pnpm, never npm."
            )
            return {"results": [{"id": "d", "text": text, "created_at": "2026-11-05T10:00:00Z"}]}

    distinct = Distinct("We switch to Zustand.", "Always use pnpm, never npm.")
    lines = _digest_lines(Host(), {"session_id": "s4", "last_at": "2026-11-05T10:00:00Z"}, distinct)  # type: ignore[arg-type]
    assert lines == [
        "- [memory:d] (2026-11-05) Asked: Add the settings screen",
        "- [memory:d] Changed: edited app/store.ts; ran pnpm test (ok)",
    ]
