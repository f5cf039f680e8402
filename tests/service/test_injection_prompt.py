"""The injections, built over a service: what a prompt costs the host, what a session start shows."""

from __future__ import annotations

import pytest

from hybrid_memory.models import NoteType
from hybrid_memory.service import NoteDraft
from hybrid_memory.service.injection import Injector, Limits

from .conftest import SCOPE, Harness


async def test_a_one_question_prompt_is_embedded_once(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    await harness.service.create_note(
        SCOPE, NoteDraft(content="The invoices table lives in the billing database.", type=NoteType.FACT)
    )
    asked: list[str] = []
    embed = harness.embedder.embed_query

    async def counted(text: str) -> list[float]:
        asked.append(text)
        return await embed(text)

    monkeypatch.setattr(harness.embedder, "embed_query", counted)
    prompt = "which database should the new invoices table go in"
    done = await Injector(harness.service).prompt(SCOPE, prompt, "now", None, Limits())
    assert "[memory:" in done.text  # the note was found: both recalls ran
    assert asked == [prompt]
    await Injector(harness.service).prompt(
        SCOPE, "and where do the invoices get their numbers", "now", None, Limits()
    )
    assert asked[1:] == ["and where do the invoices get their numbers"]  # a new prompt is embedded anew


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
    done = await Injector(harness.service).session_start(SCOPE, "new", Limits())
    assert said in done.ids
    assert sure in done.ids
    assert unsure not in done.ids
    assert unknown not in done.ids
