"""A prompt's injection, built over a service: what it costs the model process per prompt."""

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
