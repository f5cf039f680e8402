"""What the hooks inject: which recalled memories are strong enough, cited lines within budget."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hybrid_memory.integrations.config import HookConfig, estimate_tokens
from hybrid_memory.integrations.inject import anchors, render_prompt_context, strong_matches

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
