"""Eviction summaries written by a model: the prompt, the client's sampled answer, an OpenAI-compatible model.

The lifecycle tries, in order, the summary the MCP client's model wrote through
sampling (asked for before the write, see ``tools/_sampling.py``), the configured
OpenAI-compatible model (``HYBRID_MEMORY_SUMMARY_MODEL``), and the extractive
summary, which always works. A model that fails or is slow only costs a warning.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass

from hybrid_memory.models import Memory
from hybrid_memory.service.chat import ChatModel
from hybrid_memory.service.redaction import redact
from hybrid_memory.settings import LifecycleSettings

logger = logging.getLogger(__name__)

Summarizer = Callable[[Sequence[str], int], Awaitable[str | None]]
"""Summarise these texts in at most this many tokens; None when it cannot (the extractive one is used)."""


@dataclass(frozen=True)
class SummaryRequest:
    """What an eviction would summarise: the evicted memories' lines, oldest first, and the token budget."""

    lines: tuple[str, ...]
    budget: int


MAX_PROMPT_CHARS = 24_000
"""The memories put in one summary prompt; what does not fit is counted, not sent."""
MAX_LINE_CHARS = 2_000

SYSTEM_PROMPT = (
    "You maintain the long-term memory of an AI assistant. The memories below are being "
    "removed to make room. Write one short paragraph that replaces them: keep names, "
    "decisions, preferences, facts, dates and open questions; drop greetings and chatter. "
    "Write only the summary, in at most {budget} tokens."
)


def prompt(lines: Sequence[str], budget: int) -> tuple[str, str]:
    """The system prompt and the user message asking a chat model for the summary."""
    shown: list[str] = []
    used = 0
    for line in lines:
        flat = " ".join(line.split())[:MAX_LINE_CHARS]
        if shown and used + len(flat) > MAX_PROMPT_CHARS:
            break
        shown.append(f"- {flat}")
        used += len(flat)
    if len(shown) < len(lines):
        shown.append(f"(and {len(lines) - len(shown)} more memories not shown)")
    return SYSTEM_PROMPT.format(budget=budget), "Memories to summarise:\n" + "\n".join(shown)


def summary_lines(victims: Sequence[Memory]) -> tuple[str, ...]:
    """The evicted memories as a summary sees them, oldest first."""
    ordered = sorted(victims, key=lambda m: m.created_at)
    return tuple(f"{m.role}: {m.text}" if m.role else m.text for m in ordered)


async def model_summary(
    lines: Sequence[str], budget: int, models: Sequence[tuple[str, Summarizer | None]]
) -> tuple[str | None, str]:
    """The first summary a model writes (redacted) and the model's name; None: use the extractive one."""
    for name, fn in models:
        if fn is None:
            continue
        try:
            text = await fn(lines, budget)
        except Exception:  # a summary is a courtesy: the extractive one always works
            logger.warning("%s summary failed; using the extractive one", name, exc_info=True)
            continue
        if text and text.strip():
            return redact(text).text, name  # a model's words are stored like any other input
    return None, "extractive"


def precomputed(request: SummaryRequest, text: str) -> Summarizer:
    """A summarizer answering ``text``, but only for exactly the memories it was written for.

    A concurrent write may change what the eviction removes between the dry run the
    text was asked for and the write; the next summarizer in line then writes it.
    """

    async def summarize(lines: Sequence[str], budget: int) -> str | None:
        del budget
        return text if tuple(lines) == request.lines else None

    return summarize


class ModelSummarizer:
    """Eviction summaries from the configured chat model; one request each."""

    def __init__(self, model: ChatModel) -> None:
        self._model = model

    async def __call__(self, lines: Sequence[str], budget: int) -> str | None:
        system, user = prompt(lines, budget)
        return await self._model.answer(system, user, max_tokens=budget, temperature=0.2)


def build_summarizer(settings: LifecycleSettings) -> Summarizer | None:
    """The configured model's summarizer; None without ``HYBRID_MEMORY_SUMMARY_MODEL``."""
    model = ChatModel.configured(settings)
    return ModelSummarizer(model) if model is not None else None
