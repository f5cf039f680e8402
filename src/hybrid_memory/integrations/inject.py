"""What the hooks put before the model: a project context at session start, strong matches per prompt.

Every line cites ``[memory:<id>]`` so the model can ``read_memory`` the whole item. Both
stay within a token budget (estimated, :func:`~hybrid_memory.integrations.config.estimate_tokens`):
the model pays for every injected token in every later request of the session.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hybrid_memory import codestate
from hybrid_memory.host.client import HostClient, HostError
from hybrid_memory.integrations.config import HookConfig, estimate_tokens, sessions_file

_HIT_CHARS = 400
"""A recalled item is cut here: enough for a fact or a decision; the citation reads the rest."""
_RECENT_SHOWN = 3
_MIN_PROMPT_WORDS = 3
"""Shorter prompts ("yes", "go on", "thanks") carry no question worth a recall."""
VERY_STRONG_MATCH = 0.8
"""A hit matching this well is injected even when it does not repeat the prompt's names."""
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]+")
_WORDS = re.compile(r"[\w'-]+")
_NOT_NAMES = frozenset(
    " ".join(
        (
            "i i'm i've i'd i'll a an the what when where who whom whose which why how is are was were",
            "do does did can could would should will shall may might must have has had be been this that",
            "these those there here it its if in on at of for to from with by and or but not no yes please",
            "tell give show",
            "list find remember my our your their his her we you they he she me us them also then so as any",
            "all some monday tuesday wednesday thursday friday saturday sunday january february march april",
            "june july august september october november december today yesterday tomorrow ok okay thanks",
        )
    ).split()
)
_CONTEXT_QUERY = "decisions, preferences, conventions and facts about this project"


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def _hit_line(hit: dict[str, Any]) -> str:
    date = str(hit.get("created_at") or "")[:10]
    who = hit.get("note_type") or hit.get("role") or hit.get("kind") or ""
    label = ", ".join(x for x in (date, who) if x)
    line = f"- [memory:{hit['id']}] ({label}) {_one_line(str(hit.get('text', '')), _HIT_CHARS)}"
    note = codestate.note([str(f) for f in hit.get("changed") or []], hit.get("branch"))
    return f"{line} {note}" if note else line


def _fit(header: str, lines: list[str], budget: int) -> str:
    """The header and as many lines as fit in ``budget`` tokens, in order; empty when none fits."""
    kept: list[str] = []
    used = estimate_tokens(header)
    for line in lines:
        cost = estimate_tokens(line) + 1
        if used + cost > budget:
            break
        kept.append(line)
        used += cost
    return "\n".join([header, *kept]) if kept else ""


def prompt_candidates(
    config: HookConfig, host: HostClient, prompt: str, session_id: str
) -> list[dict[str, Any]]:
    """Recall for ``prompt``, best first: hits matching at least ``min_match``, not this session's
    own turns (they are in the model's context already)."""
    worth_asking = len(prompt.split()) >= _MIN_PROMPT_WORDS and not prompt.lstrip().startswith("/")
    if config.prompt_tokens <= 0 or not worth_asking:
        return []
    result = host.call_tool(
        "recall_memory",
        {
            "query": prompt[:2000],
            "limit": 8,
            "min_score": config.min_match,
            "with_context": False,
            # Room for every hit's whole text: the hook cuts each line itself (_HIT_CHARS), where
            # recall's own budget would cut the later hits to their first word.
            "max_tokens": 4000,
        },
    )
    return [h for h in result.get("results", []) if h.get("thread_id") != session_id]


def _word(word: str) -> str:
    return word.lower().removesuffix("'s").strip("'-")


def anchors(prompt: str) -> set[str]:
    """The names a prompt is about: capitalised words that are not a question word, pronoun or date."""
    return {_word(w) for w in _CAPITALISED.findall(prompt)} - _NOT_NAMES


def strong_matches(hits: list[dict[str, Any]], prompt: str, min_match: float) -> list[dict[str, Any]]:
    """The hits worth injecting unasked: ``match`` at least ``min_match`` and, when the prompt names
    someone or something, a text that names it too (unless the match is very strong).

    A prompt about a person, a project or a tool that the memory has never mentioned is about
    something else; memories that merely resemble it in meaning are what a model is misled by.
    """
    named = anchors(prompt)
    strong = []
    for hit in hits:
        match = float(hit.get("match", 0.0))
        if match < min_match:
            continue
        if named and match < VERY_STRONG_MATCH:
            words = {_word(w) for w in _WORDS.findall(str(hit.get("text", "")))}
            if not named & words:
                continue
        strong.append(hit)
    return strong


def render_prompt_context(config: HookConfig, hits: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """The cited lines of ``hits`` that fit the prompt budget, and those hits; empty when none fits."""
    header = "Possibly relevant memory from earlier sessions (cite as [memory:<id>]; read_memory gives more):"
    text = _fit(header, [_hit_line(h) for h in hits], config.prompt_tokens)
    return text, hits[: max(0, len(text.splitlines()) - 1)]


def prompt_context(
    config: HookConfig, host: HostClient, prompt: str, session_id: str
) -> tuple[str, list[dict[str, Any]]]:
    """The memories that strongly match ``prompt``, cited, within budget; empty when none does."""
    hits = strong_matches(prompt_candidates(config, host, prompt, session_id), prompt, config.min_match)
    return render_prompt_context(config, hits)


def _recent(config: HookConfig, cwd: Path, session_id: str) -> list[dict[str, Any]]:
    try:
        sessions = json.loads(sessions_file(config, cwd).read_text())
    except (OSError, ValueError):
        return []
    others = [s for s in reversed(sessions) if s.get("session_id") != session_id and s.get("first_prompt")]
    return others[:_RECENT_SHOWN]


def _core_lines(host: HostClient, query: str, budget: int) -> list[str]:
    try:
        context = host.call_tool("get_memory_context", {"query": query, "max_tokens": max(100, budget)})
    except HostError:  # a host serving only the core tools (HYBRID_MEMORY_TOOLS=core) has no core memory tool
        return []
    return [
        f"- [memory:{c['id']}] {_one_line(str(c.get('text', '')), _HIT_CHARS)}"
        for c in context.get("core", [])
    ]


def session_context(config: HookConfig, host: HostClient, cwd: Path, session_id: str) -> str:
    """Core memory, the project's notes that matter, and what the last sessions were about, within budget.

    The notes are recalled for what the last sessions asked (else for decisions and facts in
    general): a project's memory is large, and the recent work is the likeliest to go on.
    """
    budget = config.context_tokens
    if budget <= 0:
        return ""
    recent = _recent(config, cwd, session_id)
    recent_lines = [
        f"- {str(s.get('last_at') or '')[:16].replace('T', ' ')}: {_one_line(s['first_prompt'], 160)}"
        for s in recent
    ]
    recent_text = _fit("Recent sessions in this project (their first request):", recent_lines, budget // 3)
    remaining = budget - estimate_tokens(recent_text)
    query = " ".join(_one_line(s["first_prompt"], 200) for s in recent) or _CONTEXT_QUERY
    core_text = _fit("Core memory (pinned):", _core_lines(host, query, remaining), remaining)
    remaining -= estimate_tokens(core_text)
    notes_text = ""
    if remaining >= 50:
        result = host.call_tool(
            "recall_memory", {"query": query, "kinds": ["note"], "limit": 8, "with_context": False}
        )
        notes = [_hit_line(h) for h in result.get("results", [])]
        notes_text = _fit("Notes (decisions, facts, preferences) that may matter:", notes, remaining)
    parts = [p for p in (core_text, notes_text, recent_text) if p]
    if not parts:
        return ""
    return (
        "Long-term memory of this project (cite as [memory:<id>]; read_memory gives more).\n\n"
        + "\n\n".join(parts)
    )
