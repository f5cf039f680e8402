"""The prompt that asks a model for an eviction summary, and the precomputed (sampled) summarizer."""

from __future__ import annotations

from hybrid_memory.service.lifecycle.eviction_summary import (
    MAX_LINE_CHARS,
    MAX_PROMPT_CHARS,
    precomputed,
    prompt,
)
from hybrid_memory.service.lifecycle.lifecycle import SummaryRequest


def test_prompt_lists_each_memory_on_one_line_with_the_budget() -> None:
    system, user = prompt(["user: hello\nthere", "A note."], 40)
    assert system.endswith("Write only the summary, in at most 40 tokens.")
    assert user == "Memories to summarise:\n- user: hello there\n- A note."


def test_prompt_is_bounded_and_counts_what_it_leaves_out() -> None:
    lines = ["x" * (MAX_LINE_CHARS + 500)] * 40
    _, user = prompt(lines, 160)
    shown = user.splitlines()[1:-1]
    assert all(len(line) == MAX_LINE_CHARS + 2 for line in shown)
    assert sum(len(line) - 2 for line in shown) <= MAX_PROMPT_CHARS
    assert user.splitlines()[-1] == f"(and {40 - len(shown)} more memories not shown)"


async def test_a_precomputed_summary_answers_only_for_the_memories_it_was_written_for() -> None:
    summarize = precomputed(SummaryRequest(lines=("a", "b"), budget=10), "A and B.")
    assert await summarize(["a", "b"], 10) == "A and B."
    assert await summarize(["a", "b", "c"], 10) is None
