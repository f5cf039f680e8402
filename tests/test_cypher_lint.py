"""Every Cypher statement of the Neo4j backend, linted offline by Neo4j's own language support.

``tools/cypher-lint/lint.mjs`` runs ``@neo4j-cypher/language-support`` (pinned to an exact
pre-release in ``tools/cypher-lint/package.json``) over the statements of
:mod:`hybrid_memory.backends.cypher`, under Cypher 5 and Cypher 25, against *our* schema:
the ``Note`` label, one relationship type per relation, our property keys and parameters.
Any diagnostic fails, warnings included (an unknown label is only a warning to Neo4j).
The negative tests prove that each kind of mistake is reported, so a silent linter
cannot make this pass.

Install once with ``npm ci --prefix tools/cypher-lint``. Without it the tests skip,
except under ``CI``, where a missing linter is a failure.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from hybrid_memory.backends import cypher
from hybrid_memory.models import Relation

LINT_DIR = Path(__file__).resolve().parents[1] / "tools" / "cypher-lint"
PACKAGE = "@neo4j-cypher/language-support"
CYPHER_VERSIONS = ("CYPHER 5", "CYPHER 25")
"""Neo4j 5 LTS speaks Cypher 5; Neo4j 2025+ both. Every statement must pass both."""
STATEMENTS = cypher.all_statements()
SCHEMA = {
    "labels": [cypher.LABEL],
    "relationshipTypes": sorted(cypher.REL_TYPES.values()),
    "propertyKeys": sorted({*cypher.NOTE_PROPERTIES, *cypher.LINK_PROPERTIES}),
    # The linter only checks that a parameter is declared, not its value.
    "parameters": dict.fromkeys(sorted(cypher.PARAMETERS)),
}


def _unavailable(reason: str) -> None:
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"{reason}; CI must install it: npm ci --prefix tools/cypher-lint", pytrace=False)
    pytest.skip(f"{reason}: npm ci --prefix tools/cypher-lint")


def lint(statements: dict[str, str]) -> dict[str, Any]:
    """Run the linter on ``statements``: one node process per Cypher version, in parallel.

    Returns the merged report; its ``diagnostics`` hold both versions' findings.
    """
    if not (LINT_DIR / "node_modules" / PACKAGE / "package.json").is_file():
        _unavailable(f"{PACKAGE} is not installed in tools/cypher-lint")
    node = shutil.which("node")
    if node is None:
        _unavailable("node is not on PATH")
    assert node is not None
    payload = json.dumps({"statements": statements, "schema": SCHEMA})
    # Parsing is the slow part (a few hundred ms per statement), and one process uses one core.
    runs = [
        subprocess.Popen(
            [node, str(LINT_DIR / "lint.mjs"), version],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for version in CYPHER_VERSIONS
    ]
    reports: list[dict[str, Any]] = []
    for run in runs:
        out, err = run.communicate(payload, timeout=600)
        assert run.returncode == 0, f"lint.mjs failed:\n{err}"
        reports.append(json.loads(out))
    merged = {**reports[0], "cypherVersions": [v for r in reports for v in r["cypherVersions"]]}
    merged["diagnostics"] = {
        name: [found for r in reports for found in r["diagnostics"][name]] for name in statements
    }
    return merged


@pytest.fixture(scope="module")
def report() -> dict[str, Any]:
    """One linter run over every statement (starting node and the parser dominates the time)."""
    return lint(STATEMENTS)


def test_the_linter_is_the_pinned_version(report: dict[str, Any]) -> None:
    pinned = json.loads((LINT_DIR / "package.json").read_text())["dependencies"][PACKAGE]
    locked = json.loads((LINT_DIR / "package-lock.json").read_text())["packages"][f"node_modules/{PACKAGE}"]

    assert pinned[0].isdigit(), f"{PACKAGE} must be pinned to an exact version, not {pinned!r}"
    assert report["version"] == pinned == locked["version"]
    # A Cypher version added by a newer package must be added to CYPHER_VERSIONS too.
    assert report["allCypherVersions"] == report["cypherVersions"] == list(CYPHER_VERSIONS)


def test_every_statement_and_every_relation_is_linted() -> None:
    upserts = {name for name in STATEMENTS if name.startswith("UPSERT_LINK[")}

    assert upserts == {f"UPSERT_LINK[{relation}]" for relation in Relation}
    expected = {"SEARCH_NOTES", "ARCADEDB_SEARCH_NOTES", "CREATE_NOTE_FULLTEXT_INDEX", "EXPAND_BOTH"}
    assert expected <= set(STATEMENTS)


@pytest.mark.parametrize("name", list(STATEMENTS))
def test_statement_passes_neo4j_lint(report: dict[str, Any], name: str) -> None:
    assert report["diagnostics"][name] == [], STATEMENTS[name]


# A deliberately broken statement per kind of mistake, and the report it must get.
MISTAKES = {
    "syntax-error": ("MATCH (n:Note) RETRN n.id", "Invalid input 'RETRN'"),
    "unknown-label": ("MATCH (n:Nte) RETURN n.id", "Label Nte is not present"),
    "unknown-relationship-type": (
        "MATCH (n:Note)-[:LINKED]->(m:Note) RETURN m.id",
        "Relationship type LINKED is not present",
    ),
    "unknown-property": ("MATCH (n:Note) RETURN n.colour", "colour is not present"),
    "undefined-variable": ("MATCH (n:Note) RETURN m.id", "Variable `m` not defined"),
    "undeclared-parameter": (
        "MATCH (n:Note) WHERE n.project = $projet RETURN n.id",
        "Parameter $projet is not defined",
    ),
    "unknown-function": ("MATCH (n:Note) RETURN fooBar(n.id)", "Function fooBar is not present"),
    "unknown-procedure": (
        "CALL db.index.fulltext.queryNode('note_search', $query) YIELD node RETURN node.id",
        "Procedure db.index.fulltext.queryNode is not present",
    ),
}


@pytest.fixture(scope="module")
def mistakes_report() -> dict[str, Any]:
    return lint({name: statement for name, (statement, _) in MISTAKES.items()})


@pytest.mark.parametrize("mistake", list(MISTAKES))
def test_the_linter_reports_each_kind_of_mistake(mistakes_report: dict[str, Any], mistake: str) -> None:
    expected = MISTAKES[mistake][1]

    found = mistakes_report["diagnostics"][mistake]

    # Reported under both Cypher versions, so neither can pass unchecked.
    assert {d["cypherVersion"] for d in found if expected in d["message"]} == set(CYPHER_VERSIONS), found
