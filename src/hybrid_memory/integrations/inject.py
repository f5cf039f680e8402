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
from hybrid_memory.text.citation import cited as cited
from hybrid_memory.text.filler import is_filler
from hybrid_memory.text.repeats import Distinct
from hybrid_memory.text.words import normalized

_HIT_CHARS = 400
"""A recalled item is cut here: enough for a fact or a decision; the citation reads the rest."""
_MIN_PROMPT_WORDS = 3
"""Shorter prompts ("yes", "go on", "thanks") carry no question worth a recall."""
_MAX_PARTS = 3
_NOTES_PER_QUESTION = 4
"""Notes recalled for each question of a prompt (entities among them are dropped unless strong)."""
_PARTS = re.compile(
    r"\?+\s*|;\s*|,\s*(?:and|but|also|plus)\s+"
    r"|\s+and\s+(?=(?:which|what|where|when|how|who|why|can|could|should|do|does|is|are)\b)",
    re.IGNORECASE,
)
"""Where a prompt asking several things divides: after a question mark, a semicolon, ", and"."""
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
_LABEL_WORDS = 4
"""A hit that is the prompt plus fewer words than this ("Asked: …") only repeats the question."""
_STATED = ("decision", "preference", "fact")
_DIGEST_LABEL = re.compile(r"^[A-Z][a-z]+: ")
_DIGEST_PARTS = re.compile(r";\s+|\s+\|\s+")
"""Where a digest line joins its items: "a; b" (decisions, changes), "a | b" (requests)."""
_CONTEXT_QUERY = "decisions, preferences, conventions and facts about this project"
_DIGEST_QUERY = "what the session asked, changed, decided and left open"
_CONTEXT_HEADER = "Long-term memory of this project (cite as [memory:<id>]; read_memory gives more)."
_NOTES_HEADER = "Rules and decisions in force (most important first):"
_DIGEST_HEADER = "The most recent session:"
_CORE_HEADER = "Pinned:"


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


def prompt_parts(prompt: str) -> list[str]:
    """The questions of a prompt that asks several ("can I …, and which …?"), each recalled on its
    own: a part matches its memory far better than the whole does. One part for most prompts."""
    parts = [p.strip() for p in _PARTS.split(prompt[:2000]) if len(p.split()) >= _MIN_PROMPT_WORDS]
    return parts[:_MAX_PARTS] if len(parts) > 1 else [prompt[:2000]]


def prompt_candidates(
    config: HookConfig, host: HostClient, prompt: str, session_id: str
) -> list[dict[str, Any]]:
    """Recall for ``prompt``: the memories matching the whole prompt at least ``min_match``, then the
    notes stating a decision, rule, preference or fact that match one of its questions at least
    ``min_note_match``; never this session's own turns (the model has them)."""
    worth_asking = len(prompt.split()) >= _MIN_PROMPT_WORDS and not prompt.lstrip().startswith("/")
    if config.prompt_tokens <= 0 or not worth_asking:
        return []
    found: dict[str, dict[str, Any]] = {}

    def keep(query: str, limit: int, floor: float, kinds: list[str] | None = None) -> None:
        arguments: dict[str, Any] = {
            "query": query,
            "limit": limit,
            "min_score": floor,
            "with_context": False,
            # Room for every hit's whole text: the hook cuts each line itself (_HIT_CHARS), where
            # recall's own budget would cut the later hits to their first word.
            "max_tokens": 4000,
        }
        if kinds:
            arguments["kinds"] = kinds
        for hit in host.call_tool("recall_memory", arguments).get("results", []):
            if hit.get("thread_id") == session_id or not _clears(config, hit):
                continue
            if float(hit.get("match", 0.0)) > float(found.get(hit["id"], {}).get("match", -1.0)):
                found[hit["id"]] = hit

    keep(prompt[:2000], 8, config.min_match)
    if config.min_note_match < config.min_match:
        for part in prompt_parts(prompt):
            keep(part, _NOTES_PER_QUESTION, config.min_note_match, ["note"])
    return list(found.values())


def _telling(hit: dict[str, Any]) -> int:
    return 0 if hit.get("kind") not in ("summary", "note") else 1 if _stated(hit) else 2


def _stated(hit: dict[str, Any]) -> bool:
    """A note stating a decision, rule, preference or fact (not an entity, a question or a concept)."""
    return hit.get("kind") == "note" and hit.get("note_type") in _STATED


def _clears(config: HookConfig, hit: dict[str, Any]) -> bool:
    bar = config.min_note_match if _stated(hit) else config.min_match
    return float(hit.get("match", 0.0)) >= bar


def _word(word: str) -> str:
    return word.lower().removesuffix("'s").strip("'-")


def anchors(prompt: str) -> set[str]:
    """The names a prompt is about: capitalised words that are not a question word, pronoun or date."""
    return {_word(w) for w in _CAPITALISED.findall(prompt)} - _NOT_NAMES


def strong_matches(
    hits: list[dict[str, Any]], prompt: str, min_match: float, min_note_match: float | None = None
) -> list[dict[str, Any]]:
    """The hits worth injecting unasked: ``match`` at least ``min_match`` (a note: ``min_note_match``,
    when given) and, when the prompt names someone or something, a text that names it too (unless
    the match is very strong).

    A prompt about a person, a project or a tool that the memory has never mentioned is about
    something else; memories that merely resemble it in meaning are what a model is misled by.
    """
    named = anchors(prompt)
    strong = []
    for hit in hits:
        match = float(hit.get("match", 0.0))
        note_bar = min_note_match if min_note_match is not None and _stated(hit) else None
        if match < (min_match if note_bar is None else note_bar):
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
    candidates = prompt_candidates(config, host, prompt, session_id)
    hits = strong_matches(candidates, prompt, config.min_match, config.min_note_match)
    return render_prompt_context(config, worth_showing(hits, prompt))


def worth_showing(hits: list[dict[str, Any]], prompt: str) -> list[dict[str, Any]]:
    """``hits`` without filler, without the prompt itself (asked before: its answer is what helps,
    not the question under a label such as "Asked:") and without a text already shown above it."""
    distinct = Distinct(prompt)
    asked = normalized(prompt)
    shown = []
    # The turns themselves first: a digest or a note is a second telling, an entity ("File x") a name.
    for hit in sorted(hits, key=_telling):
        if hit.get("kind") == "note" and not _stated(hit) and hit.get("note_type") == "concept":
            continue
        text = str(hit.get("text", ""))
        flat = normalized(text)
        if is_filler(text) or (asked and len(flat.replace(asked, " ").split()) < _LABEL_WORDS):
            continue
        if distinct.new(text):
            shown.append(hit)
    return shown


def _last_session(config: HookConfig, cwd: Path, session_id: str) -> dict[str, Any] | None:
    try:
        sessions = json.loads(sessions_file(config, cwd).read_text())
    except (OSError, ValueError):
        return None
    others = [s for s in sessions if isinstance(s, dict) and s.get("session_id") not in (None, session_id)]
    return others[-1] if others else None


def _digest_lines(host: HostClient, session: dict[str, Any] | None, distinct: Distinct) -> list[str]:
    """The most recent session's digest (its summary memory), a cited line each of what it asked, left open,
    changed and decided; what is shown above already (a decision that is a note) is left out."""
    if session is None:
        return []
    result = host.call_tool(
        "recall_memory",
        {
            "query": _DIGEST_QUERY,
            "thread_id": session["session_id"],
            "kinds": ["summary"],
            "limit": 1,
            "with_context": False,
            "max_tokens": 2000,
        },
    )
    hits = result.get("results", [])
    if not hits:
        return []
    digest = hits[0]
    date = str(session.get("last_at") or digest.get("created_at") or "")[:10]
    rows = [" ".join(r.split()) for r in str(digest.get("text", "")).splitlines() if r.strip()]
    order = {"asked": 0, "open": 1, "changed": 2, "decided": 3}
    rows.sort(key=lambda r: order.get(r.split(":", 1)[0].lower(), 4))
    lines: list[str] = []
    for row in rows:
        label, _, body = row.partition(": ") if _DIGEST_LABEL.match(row) else ("", "", row)
        parts = [p for p in _DIGEST_PARTS.split(body) if p.strip() and not distinct.retold(p)]
        if not parts:
            continue
        dated = f"({date}) " if date and not lines else ""
        text = f"{label}: {'; '.join(parts)}" if label else "; ".join(parts)
        lines.append(f"- [memory:{digest['id']}] {dated}{_one_line(text, _HIT_CHARS)}")
    return lines


def _note_lines(context: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (
            f"- [memory:{n['id']}] ({n.get('role') or 'note'}) {_one_line(str(n['text']), _HIT_CHARS)}",
            n["text"],
        )
        for n in context.get("notes", [])
    ]


def _core_lines(context: dict[str, Any]) -> list[tuple[str, str]]:
    return [
        (f"- [memory:{c['id']}] {_one_line(str(c.get('text', '')), _HIT_CHARS)}", c["text"])
        for c in context.get("core", [])
    ]


def _sections(
    parts: list[tuple[str, list[str]]], budget: int, shares: tuple[float, ...]
) -> list[tuple[str, list[str]]]:
    """Each section's lines within its share of ``budget`` first, then what is left over in order."""
    kept: list[list[str]] = [[] for _ in parts]
    used = 0

    def take(i: int, cap: int) -> None:
        nonlocal used
        header, lines = parts[i]
        for line in lines[len(kept[i]) :]:
            cost = estimate_tokens(line) + 1 + (0 if kept[i] else estimate_tokens(header) + 2)
            if used + cost > cap or used + cost > budget:
                return
            kept[i].append(line)
            used += cost

    for i, share in enumerate(shares):
        take(i, used + int(budget * share))
    for i in range(len(parts)):
        take(i, budget)
    return [(parts[i][0], kept[i]) for i in range(len(parts)) if kept[i]]


def session_context(config: HookConfig, host: HostClient, cwd: Path, session_id: str) -> str:
    """What a new session should know first, within budget: the project's current decisions, rules,
    preferences and facts, then the most recent session's digest (what it asked, left open, changed), then
    core memory. Every line cites its memory; no text is shown twice; nothing superseded is shown.
    """
    budget = config.context_tokens
    if budget <= 0:
        return ""
    try:
        context = host.call_tool("get_memory_context", {"query": _CONTEXT_QUERY, "max_tokens": 4000})
    except HostError:  # a host serving only the core tools (HYBRID_MEMORY_TOOLS=core) has no context tool
        context = {}
    distinct = Distinct()
    notes = [line for line, text in _note_lines(context) if distinct.new(text)]
    digest = _digest_lines(host, _last_session(config, cwd, session_id), distinct)
    core = [line for line, text in _core_lines(context) if distinct.new(text)]
    body = budget - estimate_tokens(_CONTEXT_HEADER) - 2
    shown = _sections(
        [(_NOTES_HEADER, notes), (_DIGEST_HEADER, digest), (_CORE_HEADER, core)], body, (0.55, 0.3, 0.15)
    )
    if not shown:
        return ""
    return _CONTEXT_HEADER + "\n\n" + "\n\n".join("\n".join([h, *lines]) for h, lines in shown)
