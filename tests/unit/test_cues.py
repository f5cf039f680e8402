"""Notes read from what was said: rules, decisions, preferences and facts, and what is left alone."""

from __future__ import annotations

import pytest

from hybrid_memory.service.knowledge.capture.digest import digest
from hybrid_memory.service.knowledge.capture.entities import Entity, command_name, mentioned
from hybrid_memory.service.knowledge.statements.cues import Said, cues


def _found(text: str, role: str = "user") -> list[tuple[str, str]]:
    return [(c.kind, c.content) for c in cues([Said("m1", role, text)])]


def test_rules_decisions_and_conventions_of_one_turn_are_three_notes() -> None:
    said = (
        "We use Postgres 16 for billing, not MySQL. Tests run with `make test`. Never push to main directly"
    )
    assert _found(said) == [
        ("decision", "We use Postgres 16 for billing, not MySQL."),
        ("rule", "Tests run with `make test`."),
        ("rule", "Never push to main directly."),
    ]


@pytest.mark.parametrize(
    ("said", "kind", "content"),
    [
        ("Let's set the token TTL to 15 minutes.", "decision", "Let's set the token TTL to 15 minutes."),
        (
            "Access tokens expire after 15 minutes, refresh tokens after 30 days.",
            "decision",
            "Access tokens expire after 15 minutes, refresh tokens after 30 days.",
        ),
        ("Set the access token TTL to 15 minutes.", "decision", "Set the access token TTL to 15 minutes."),
        ("The session timeout should be 30 minutes", "decision", "The session timeout should be 30 minutes."),
        ("ok so from now on we squash merges", "rule", "From now on we squash merges."),
        (
            "I prefer small commits with clear messages.",
            "preference",
            "I prefer small commits with clear messages.",
        ),
        ("Commits must be signed.", "rule", "Commits must be signed."),
        (
            "We decided that releases ship on Tuesdays.",
            "decision",
            "We decided that releases ship on Tuesdays.",
        ),
        (
            "Let's go with FastAPI for the new service.",
            "decision",
            "Let's go with FastAPI for the new service.",
        ),
        ("Do not commit generated files.", "rule", "Do not commit generated files."),
        ("Our API service is deployed to Fly.io.", "fact", "Our API service is deployed to Fly.io."),
        ("I'm a backend engineer at Acme.", "fact", "I'm a backend engineer at Acme."),
        (
            "- always run `ruff format` before committing",
            "rule",
            "Always run `ruff format` before committing.",
        ),
    ],
)
def test_a_stated_rule_decision_preference_or_fact_is_a_note(said: str, kind: str, content: str) -> None:
    assert _found(said) == [(kind, content)]


@pytest.mark.parametrize(
    "said",
    [
        "Should we use Redis for the cache?",
        "If we used Kafka we would never lose events.",
        "Maybe we use SQLite for the tests.",
        "Never mind, I'll do it myself.",
        "I don't think we use Redis anymore.",
        "I think we always deploy on Fridays.",
        "Don't change the tests for now.",
        "Don't worry about the linter.",
        "Always the same error, ugh.",
        "It must be the cache.",
        "We used to use MySQL.",
        "```\n# always run this first\nnever_call()\n```",
        "> Never push to main\nsays the old README",
        '"Never push to main" is what the docs say',
        "(edited src/never.py)",
        "Let's go with option 2.",
        "Ok, let's go with your plan.",
        "We use it for everything.",
        "This service is a mess.",
        "Our build is slow today.",
        "I tried it once, never again.",
        "Setup: run the script.",
    ],
)
def test_questions_hypotheticals_hedges_one_offs_quotes_and_code_are_no_notes(said: str) -> None:
    assert _found(said) == []


def test_an_assistant_turn_counts_only_where_it_restates_a_decision() -> None:
    assert _found("Always run the migrations first; that is how Django works.", role="assistant") == []
    assert _found("Noted — never push to main directly.", role="assistant") == [
        ("rule", "Never push to main directly.")
    ]


def test_an_assistant_restating_several_things_is_read_part_by_part_never_as_one_note() -> None:
    mashed = (
        "Understood: billing stays on Postgres 16, I run `make test`, and changes go through pull requests."
    )
    assert _found(mashed, role="assistant") == []
    assert _found(
        "Noted: never push to main directly, and always run make test before a merge.", role="assistant"
    ) == [
        ("rule", "Never push to main directly."),
        ("rule", "Always run make test before a merge."),
    ]
    assert _found("Decision: we use Postgres 16 for billing, not MySQL.", role="assistant") == [
        ("decision", "We use Postgres 16 for billing, not MySQL.")
    ]


def test_a_long_pasted_turn_is_not_the_users_words() -> None:
    pasted = "Never use eval. " + "log line without any rule in it. " * 120
    assert _found(pasted) == []


def test_cues_in_portuguese_spanish_french_and_german_and_nothing_breaks_on_other_scripts() -> None:
    assert _found("Nunca faça push direto na main. Usamos Postgres para o faturamento.") == [
        ("rule", "Nunca faça push direto na main."),
        ("decision", "Usamos Postgres para o faturamento."),
    ]
    assert _found("Siempre ejecuta las pruebas antes de hacer merge. Prefiero commits pequeños.") == [
        ("rule", "Siempre ejecuta las pruebas antes de hacer merge."),
        ("preference", "Prefiero commits pequeños."),
    ]
    assert _found("Ne jamais pousser sur main. On utilise Redis pour le cache.") == [
        ("rule", "Ne jamais pousser sur main."),
        ("decision", "On utilise Redis pour le cache."),
    ]
    assert _found("Wir nutzen Kafka für Events.") == [("decision", "Wir nutzen Kafka für Events.")]
    assert _found("我们使用 Postgres。永远不要直接推送到 main。") == []
    assert _found("pode fazer as alterações") == []


def test_a_change_names_the_value_it_replaces() -> None:
    [change] = cues([Said("m1", "user", "We moved billing from Postgres 16 to CockroachDB.")])
    assert (change.kind, change.replaces) == ("decision", "Postgres 16")
    [bump] = cues([Said("m1", "user", "We're bumping the Node version from 18 to 20.")])
    assert bump.replaces == "18"
    [pt] = cues([Said("m1", "user", "Migramos o faturamento de Postgres 16 para CockroachDB.")])
    assert pt.replaces == "Postgres 16"


def test_one_statement_said_in_two_turns_is_one_cue_citing_both() -> None:
    [cue] = cues(
        [Said("a", "user", "Never push to main directly."), Said("b", "user", "never push to main directly")]
    )
    assert cue.sources == ["a", "b"]


def test_entities_of_activity_lines_and_of_what_was_said() -> None:
    activity = (
        "(edited src/auth.py)\n(ran cd api && uv add httpx==0.27 → ok)\n"
        "(ran git push origin main → failed: error: failed to push 3 refs)"
    )
    assert mentioned(activity, said_by_user=False) == [
        Entity("file", "src/auth.py"),
        Entity("command", "uv add"),
        Entity("package", "httpx"),
        Entity("command", "git push"),
        Entity("error", "error: failed to push N refs"),
    ]
    said = "See https://github.com/acme/api/issues/12 and PROJ-481 (UTF-8 safe) in `auth.py`; on Postgres 16."
    assert mentioned(said, said_by_user=True) == [
        Entity("url", "https://github.com/acme/api/issues/12"),
        Entity("ticket", "PROJ-481"),
        Entity("file", "auth.py"),
        Entity("service", "Postgres"),
    ]
    assert [command_name(c) for c in ("FOO=1 python -m pytest -q", "npm run build", "make test")] == [
        "python -m pytest",
        "npm run build",
        "make test",
    ]


def test_the_digest_has_its_four_lines() -> None:
    said = [
        Said("1", "user", "Add rate limiting to the login endpoint. Never log tokens."),
        Said("2", "assistant", "(edited src/auth.py)"),
        Said("3", "assistant", "(tests passed: make test)"),
        Said("4", "user", "thanks"),
        Said("5", "assistant", "Done. Next step: wire the limiter into the admin API."),
    ]
    assert digest(said, cues(said)) == (
        "Goal: Add rate limiting to the login endpoint. Never log tokens.\n"
        "Changed: edited src/auth.py; ran make test (passed)\n"
        "Decided: Never log tokens.\n"
        "Open: Next step: wire the limiter into the admin API."
    )


@pytest.mark.parametrize(
    "last",
    [
        "From now on we deploy on Thursdays only.",
        "Always run `make lint` before committing!",
        "Do not push to main.",
        "When you deploy, run the migrations first.",
        "a partir de agora usamos pnpm",
    ],
)
def test_a_statement_the_assistant_only_acknowledged_is_not_left_open(last: str) -> None:
    # The reply ("Noted.") is filler and is not stored, so the user's statement is the last turn.
    said = [
        Said("1", "user", "Add a health endpoint to the API."),
        Said("2", "assistant", "(edited src/api/health.py)"),
        Said("3", "user", last),
    ]
    assert "Open:" not in digest(said, cues(said))


@pytest.mark.parametrize(
    "last",
    [
        "Which port does the staging proxy listen on?",
        "how do I rerun only the failed tests",
        "can you check why the nightly job is slow",
        "¿Dónde están los logs del worker?",
        "qual o comando pra gerar o cliente",
    ],
)
def test_a_last_question_with_no_reply_is_left_open(last: str) -> None:
    said = [Said("1", "user", "Add a health endpoint to the API."), Said("2", "user", last)]
    assert digest(said, cues(said)).splitlines()[-1] == f"Open: unanswered: {last}"


def test_later_remaining_and_pending_in_ordinary_prose_leave_nothing_open() -> None:
    said = [
        Said("1", "user", "Move the nightly load to 04:00 UTC; the upstream export finishes later now."),
        Said(
            "2",
            "assistant",
            "The deploy job applies the pending migrations, then the remaining services restart.",
        ),
        Said("3", "assistant", "The firewall blocked port 8080, so the proxy listens on 8443."),
    ]
    assert "Open:" not in digest(said, cues(said))
    said.append(Said("4", "assistant", "The retry logic is not done yet; I left it for later."))
    assert (
        digest(said, cues(said)).splitlines()[-1]
        == "Open: The retry logic is not done yet; I left it for later."
    )


def test_german_and_iberian_rules_and_named_facts_are_notes_and_small_talk_is_not() -> None:
    assert _found(
        "Wir deployen nur über GitHub Actions, nie manuell mit kubectl. Die Datenbank ist MariaDB 10.11."
    ) == [
        ("rule", "Wir deployen nur über GitHub Actions, nie manuell mit kubectl."),
        ("fact", "Die Datenbank ist MariaDB 10.11."),
    ]
    assert _found("El frontend está hecho con Next.js 14.") == [
        ("fact", "El frontend está hecho con Next.js 14.")
    ]
    assert _found("Wir sehen uns nur kurz. Die Datenbank ist langsam. Der Worker ist fertig.") == []


def test_a_runner_s_command_is_named_by_what_it_runs_and_an_absolute_path_stays_whole() -> None:
    assert [command_name(c) for c in ("uv run pytest -q tests/test_worker.py", "poetry run mypy src")] == [
        "uv run pytest",
        "poetry run mypy",
    ]
    traceback = '  File "/app/lager/worker.py", line 88, in run; see ./lager/worker.py'
    assert [e.name for e in mentioned(traceback, said_by_user=True)] == [
        "/app/lager/worker.py",
        "lager/worker.py",
    ]


def test_an_edit_refused_or_interrupted_is_not_in_the_digest_s_changes() -> None:
    said = [
        Said("1", "user", "Make the loader read only the needed columns."),
        Said("2", "assistant", "(edited ingest/schema.py)\n(edited ingest/loader.py)"),
        Said("3", "assistant", "(not edited ingest/loader.py)"),
        Said("4", "user", "keep the loader as is, we move the heavy reads to DuckDB."),
    ]
    assert digest(said, cues(said)).splitlines()[1] == "Changed: edited ingest/schema.py"
