"""The statement finder: which clauses of what people said become notes, and of which kind."""

from __future__ import annotations

from pathlib import Path

import pytest

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.service.knowledge.classifier import WEIGHTS, read, shipped
from hybrid_memory.service.knowledge.clauses import answered, clauses
from hybrid_memory.service.knowledge.cues import Said
from hybrid_memory.service.knowledge.finder import FEATURES, find
from hybrid_memory.service.knowledge.labelled import SHIPPED, load, matches, said
from hybrid_memory.service.knowledge.lexicon import language
from tests.fakes import FakeEmbedder

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "statements" / "holdout.jsonl"


def _user(text: str, before: str = "") -> list[Said]:
    turns = [Said("a", "assistant", before)] if before else []
    return [*turns, Said("u", "user", text)]


@pytest.mark.parametrize(
    "text",
    [
        "SyntaxError: from __future__ imports must occur at the beginning of the file.",
        'Traceback (most recent call last):\n  File "app.py", line 3\nValueError: must be positive',
        "npm ERR! code ERESOLVE: peer dependencies must be resolved",
        "should we use redis for the cache?",
        "¿por qué falla el deploy?",
        "为什么构建失败了\uff1f",
        "能不能統一用一個就好",
        "what if we moved to pulumi",
        "thanks!",
        "谢谢",
        "│ never deploy on fridays │",
        "[Image #1]",
        "```\nalways_run = True  # never change\n```",
    ],
)
def test_pastes_logs_questions_hypotheticals_and_thanks_are_never_candidates(text: str) -> None:
    assert clauses(text) == []


def test_a_long_turn_is_a_paste_unless_it_hands_over_a_plan() -> None:
    paste = "Setting up dbus (1.16.2-2) ...\n" * 10 + "we always use zstd for the images. " * 100
    assert clauses(paste) == []
    plan = "Implement the following plan:\n\n## Decisions\n- Use zstd for every image\n" + "filler. " * 500
    assert next(c.text for c in clauses(plan) if c.in_plan) == "Decisions"


def test_a_bare_reply_names_the_option_it_picks_or_the_question_it_answers() -> None:
    options = (
        "Three ways:\n1. Progressive loading\n2. Cache everything\n3. Server-side pagination\nWhich one?"
    )
    assert answered("go with 2", options) == "option 2: Cache everything"
    assert answered("Option 1", options) == "option 1: Progressive loading"
    asked = "The screensaver kicks in after 2.5 minutes. What would you like to change it to?"
    assert answered("10 minutes", asked) == "asked: What would you like to change it to?"
    assert answered("10 minutes", "Done, it waits 10 minutes now.") == ""


async def test_a_value_or_an_option_given_in_reply_is_a_decision_without_the_classifier() -> None:
    asked = "The screensaver kicks in after **2.5 minutes**. What would you like to change it to?"
    options = "Here are three options:\n1. Keep REST\n2. Move to tRPC\n3. Add GraphQL\nWhich one?"
    turns = [*_user("10 minutes", asked), Said("b", "assistant", options), Said("v", "user", "go with 2")]
    found = await find(turns, FakeEmbedder(), mode="cues")
    assert [(c.kind, c.content) for c in found] == [
        ("decision", "10 minutes (asked: What would you like to change it to?)"),
        ("decision", "Go with 2 (option 2: Move to tRPC)"),
    ]
    assert await find(_user("sweet", "Done. It now waits 10 minutes."), FakeEmbedder(), mode="cues") == []


async def test_the_decisions_of_a_plan_the_user_hands_over_are_notes() -> None:
    plan = (
        "Implement the following plan:\n\n# Metrics dashboard\n\n## Decisions\n"
        "- Use wandb for all metrics\n- Keep every checkpoint under runs/\n- Never log raw user data\n"
    )
    found = {c.content: c.kind for c in await find(_user(plan), FakeEmbedder(), mode="cues")}
    assert found == {
        "Use wandb for all metrics.": "decision",
        "Keep every checkpoint under runs/.": "decision",
        "Never log raw user data.": "rule",
    }


@pytest.mark.parametrize(
    ("text", "kind", "content"),
    [
        (
            "应该依照 role.name 这样为主不是把 role 变成 roleName",
            "rule",
            "应该依照 role.name 这样为主不是把 role 变成 roleName.",
        ),
        ("用 wandb 收集和可视化所有指标", "decision", "用 wandb 收集和可视化所有指标"),
        ("pode fazer as alteraçoes e nao fique me perguntando", "rule", "Nao fique me perguntando."),
        (
            "コミットメッセージは必ず英語で書いてください",
            "rule",
            "コミットメッセージは必ず英語で書いてください",
        ),
        (
            "les migrations doivent toujours être relues",
            "rule",
            "Les migrations doivent toujours être relues.",
        ),
    ],
)
async def test_rules_in_other_languages_are_found_by_their_markers(
    text: str, kind: str, content: str
) -> None:
    found = await find(_user(text), FakeEmbedder(), mode="cues")
    assert [(c.kind, c.content) for c in found] == [(kind, content)]


@pytest.mark.parametrize(
    "text", ["帮我修一下这个 bug\uff0c不要改别的", "Line 60 的 bug 應該優先修復", "先不要改好了你幫我 review"]
)
async def test_a_one_off_request_in_chinese_is_no_rule(text: str) -> None:
    assert await find(_user(text), FakeEmbedder(), mode="cues") == []


def test_the_shipped_weights_fit_the_features_and_the_packaged_model() -> None:
    model = shipped()
    assert model is not None
    assert model.features == FEATURES
    assert model.weights.shape == (384 + len(FEATURES),)
    assert 0.5 <= model.threshold < 1.0
    assert read(WEIGHTS).threshold == model.threshold
    assert WEIGHTS.stat().st_size < 20_000


def test_shipped_sessions_are_labelled_in_every_language_with_negatives_that_look_like_rules() -> None:
    sessions = load(SHIPPED)
    languages = {language(s.text) for session in sessions for s in session.statements}
    assert {"en", "pt", "es", "fr", "de", "zh", "ja"} <= languages
    statements = {s.text for session in sessions for s in session.statements}
    negatives = [t.text for session in sessions for t in session.turns if t.text not in statements]
    assert "Error: connection refused: the server must be running before you call connect()" in negatives
    assert "should we use redis here?" in negatives


def test_a_note_matches_a_statement_it_says_or_a_clause_of_it() -> None:
    assert matches(
        "The company I work for is L&S Electric what if I wanted it", "The company I work for is L&S Electric"
    )
    assert matches(
        "Run the script every 5 minutes", "Run the script every 5 minutes using cron, infact only that"
    )
    assert not matches("i need a quick tool to copy text", "i dont want to be ctrl+c as is huge text")


@pytest.mark.model
async def test_the_finder_on_sessions_it_never_saw_is_precise(embedder: Embedder) -> None:
    right = drawn = 0
    for session in load(FIXTURES):
        for note in await find(said(session), embedder):
            drawn += 1
            right += any(matches(note.said or note.content, s.text) for s in session.statements)
    assert drawn >= 10
    assert right / drawn >= 0.8


@pytest.mark.model
async def test_casual_statements_of_real_sessions_are_notes_and_pasted_errors_are_not(
    embedder: Embedder,
) -> None:
    stated = [
        "dont use /tmp keep everything within the claude dir",
        "currently implementation is the source of thruth",
    ]
    for text in stated:
        assert [c.said for c in await find(_user(text), embedder)] == [text]
    unsaid = [
        "SyntaxError: from __future__ imports must occur at the beginning of the file.",
        "Read the output file to retrieve the result: /private/tmp/tasks/b1.output",
        "please use a try/except here",
        "can you fix the login bug",
    ]
    for text in unsaid:
        assert await find(_user(text), embedder) == []


def test_options_listed_in_one_line_are_read_too() -> None:
    options = "Here are three options: 1. Keep the REST API 2. Move to tRPC 3. Add GraphQL on top. Which one?"
    assert answered("go with 2", options) == "option 2: Move to tRPC"
    assert answered("go with 2", "We tested 2.5 versions. Which one?") == "asked: Which one?"


@pytest.mark.model
async def test_a_note_only_the_classifier_found_says_so_in_its_tags(embedder: Embedder) -> None:
    [cued] = await find(_user("never push straight to main"), embedder)
    assert cued.tags == ["captured", "rule"]
    [classified] = await find(_user("pls dont touch the migrations folder, those are generated"), embedder)
    assert classified.tags == ["captured", "rule", "classified"]
    assert 0.5 < classified.score < 1.0
