"""The injections, built over a service: what a prompt costs the host, what a session start shows."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import pytest

from hybrid_memory.integrations.hosted import limits
from hybrid_memory.models import MemoryKind, NoteType, RecallResult, Scope
from hybrid_memory.service import NoteDraft, ThreadDraft
from hybrid_memory.service.injection import Injector, prompt
from hybrid_memory.service.recall import RecallOptions

from .conftest import SCOPE, Harness, messages


def _count_embeddings(harness: Harness, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the model is asked to embed from now on, in order."""
    asked: list[str] = []
    embed = harness.embedder.embed_query

    async def counted(text: str) -> list[float]:
        asked.append(text)
        await anyio.lowlevel.checkpoint()  # as a model's thread does: the other recalls go on meanwhile
        return await embed(text)

    monkeypatch.setattr(harness.embedder, "embed_query", counted)
    return asked


async def test_a_one_question_prompt_is_embedded_once(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    await harness.service.create_note(
        SCOPE, NoteDraft(content="The invoices table lives in the billing database.", type=NoteType.FACT)
    )
    asked = _count_embeddings(harness, monkeypatch)
    prompt = "which database should the new invoices table go in"
    done = await Injector(harness.service).prompt(SCOPE, prompt, "now", None, limits())
    assert "[memory:" in done.text  # the note was found: both recalls ran
    assert asked == [prompt]
    await Injector(harness.service).prompt(
        SCOPE, "and where do the invoices get their numbers", "now", None, limits()
    )
    assert asked[1:] == ["and where do the invoices get their numbers"]  # a new prompt is embedded anew


ASKS_TWO = "which database should the new invoices table go in, and who gives the invoices their numbers?"


async def _notes(harness: Harness) -> None:
    for content in (
        "The invoices table lives in the billing database.",
        "Invoice numbers come from the billing sequence, never from the shop.",
    ):
        await harness.service.create_note(SCOPE, NoteDraft(content=content, type=NoteType.FACT))
    await harness.service.remember_thread(
        SCOPE, ThreadDraft("earlier", messages("Where do invoices go?", "In the billing database."))
    )


async def test_a_prompt_asking_two_things_embeds_each_question_once(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _notes(harness)
    asked = _count_embeddings(harness, monkeypatch)
    parts = prompt.prompt_parts(ASKS_TWO)
    assert len(parts) == 2
    done = await Injector(harness.service).prompt(SCOPE, ASKS_TWO, "now", None, limits())
    assert "billing sequence" in done.text
    assert sorted(asked) == sorted([ASKS_TWO, *parts])


async def test_what_a_prompt_finds_does_not_depend_on_which_recall_ends_first(harness: Harness) -> None:
    await _notes(harness)
    parts_done = anyio.Event()
    waiting = len(prompt.prompt_parts(ASKS_TWO))

    async def whole_last(scope: Scope, query: str, options: RecallOptions) -> RecallResult:
        nonlocal waiting
        if options.kinds is None:  # the whole prompt's recall answers after every question's
            await parts_done.wait()
        result = await harness.service.recall(scope, query, options)
        if options.kinds == [MemoryKind.NOTE]:
            waiting -= 1
            if not waiting:
                parts_done.set()
        return result

    def found(hits: list[prompt.RecallHit]) -> list[tuple[str, float]]:
        return [(h.id, h.match) for h in hits]

    bars = {"session_id": "now", "work_tree": None, "min_match": 0.3, "min_note_match": 0.1}
    usual = await prompt.candidates(harness.service.recall, SCOPE, ASKS_TWO, **bars)  # type: ignore[arg-type]
    reversed_ = await prompt.candidates(whole_last, SCOPE, ASKS_TWO, **bars)  # type: ignore[arg-type]
    assert len(usual) >= 2
    assert found(reversed_) == found(usual)


async def test_the_host_counts_the_tokens_of_a_line_once_across_prompts(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _notes(harness)
    counted: list[str] = []
    count = harness.embedder.count_tokens

    def counting(text: str) -> int:
        counted.append(text)
        return count(text)

    monkeypatch.setattr(harness.embedder, "count_tokens", counting)
    injector = Injector(harness.service)
    first = await injector.prompt(SCOPE, ASKS_TWO, "now", None, limits())
    assert first.text
    assert counted
    counted.clear()
    again = await injector.prompt(SCOPE, ASKS_TWO, "later", None, limits())
    assert again == first
    assert counted == []


async def test_session_start_shows_a_classified_note_only_when_the_finder_was_confident(
    harness: Harness,
) -> None:
    async def note(content: str, *tags: str) -> str:
        return (
            await harness.service.create_note(
                SCOPE, NoteDraft(content=content, type=NoteType.DECISION, tags=list(tags))
            )
        ).id

    said = await note("Never push straight to main; open a pull request.")
    sure = await note(
        "Keep the CSV columns of the invoice export as they are.", "captured", "classified", "p:0.991"
    )
    unsure = await note(
        "Move the lead sequence field together with the magnitude.", "captured", "classified", "p:0.946"
    )
    unknown = await note("Use the old cron job for the weather refresh.", "captured", "classified")
    done = await Injector(harness.service).session_start(SCOPE, "new", limits())
    assert said in done.ids
    assert sure in done.ids
    assert unsure not in done.ids
    assert unknown not in done.ids
