"""What the hooks inject, assembled where the memory lives: one request per hook.

A session start gets the project's context (:mod:`.session`), a prompt the memories that
strongly match it (:mod:`.prompt`), both cited ``[memory:<id>]`` and fitted to a token
budget counted as the tools count ``max_tokens``. The hook sends the event and prints the
text; every threshold and budget is applied here, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from hybrid_memory.models import Scope
from hybrid_memory.service.injection import prompt as prompts
from hybrid_memory.service.injection import session as sessions
from hybrid_memory.service.injection.render import code_note, fit, line
from hybrid_memory.text.citation import cited
from hybrid_memory.text.repeats import Distinct

if TYPE_CHECKING:
    from hybrid_memory.service.memory_service import MemoryService

CONTEXT_SCAN_TOKENS = 4000
"""The context block the session start chooses from (then fitted to its own, smaller budget)."""


@dataclass(frozen=True)
class Limits:
    """The hooks' budgets and thresholds (``HYBRID_MEMORY_HOOK_*``, read by the hook and sent along; their
    defaults are the hooks' own, :data:`hybrid_memory.integrations.config.HOOK_VARIABLES`)."""

    context_tokens: int
    prompt_tokens: int
    min_match: float
    min_note_match: float


@dataclass
class Injection:
    """The text to inject (empty: nothing worth it), the ids it cites, and its tokens."""

    text: str = ""
    ids: list[str] = field(default_factory=list)
    tokens: int = 0


COUNTED = 1024
"""Texts whose tokens an injector remembers: the header and the lines a session's prompts bring back."""


class Injector:
    """Builds the injections over an open service; one serves every hook of the host."""

    def __init__(self, service: MemoryService) -> None:
        self._service = service
        self._counted: dict[str, int] = {}

    def _count(self, text: str) -> int:
        tokens = self._counted.get(text)
        if tokens is None:
            if len(self._counted) >= COUNTED:
                self._counted.clear()
            tokens = self._counted[text] = self._service.embedder.count_tokens(text)
        return tokens

    def _done(self, text: str, ids: list[str]) -> Injection:
        return Injection(text, list(dict.fromkeys(ids)), self._count(text) if text else 0)

    async def session_start(self, scope: Scope, session_id: str | None, limits: Limits) -> Injection:
        """The project's notes in force, the last session's digest, the goals of the sessions before
        it and core memory, within ``limits.context_tokens``."""
        if limits.context_tokens <= 0:
            return Injection()
        service = self._service
        context = await service.memory_context(
            scope, sessions.CONTEXT_QUERY, thread_id=None, max_tokens=CONTEXT_SCAN_TOKENS
        )
        distinct = Distinct()
        sure = await sessions.certainties(service.stores.graph, scope, context)
        notes = sessions.note_lines(context, distinct, sure)
        recent = await sessions.recent_digests(
            service.stores.vectors, scope, session_id, 1 + sessions.EARLIER_SESSIONS
        )
        digest = sessions.digest_lines(recent[0] if recent else None, distinct)
        closed = await sessions.superseded(service.stores.graph, scope, recent[1:])
        earlier = sessions.earlier_lines(recent[1:], distinct, closed)
        core = sessions.core_lines(context, distinct)
        text = sessions.assemble(notes, digest, core, limits.context_tokens, self._count, earlier)
        return self._done(text, [i for i in cited(text) if i != "<id>"])

    async def prompt(
        self, scope: Scope, prompt: str, session_id: str | None, work_tree: Path | None, limits: Limits
    ) -> Injection:
        """The memories that strongly match ``prompt``, cited, within ``limits.prompt_tokens``."""
        if limits.prompt_tokens <= 0 or not prompts.worth_asking(prompt):
            return Injection()
        found = await prompts.candidates(
            self._service.recall,
            scope,
            prompt,
            session_id=session_id,
            work_tree=work_tree,
            min_match=limits.min_match,
            min_note_match=limits.min_note_match,
        )
        hits = prompts.worth_showing(found, prompt)
        lines = [code_note(line(h.id, h.text, prompts.label(h)), h.changed, h.branch) for h in hits]
        text, shown = fit(prompts.HEADER, lines, limits.prompt_tokens, self._count)
        return self._done(text, [h.id for h in hits[:shown]])


__all__ = ["Injection", "Injector", "Limits"]
