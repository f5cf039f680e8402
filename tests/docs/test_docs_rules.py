"""Rules the user documentation keeps: a short README, no planning words, true commands and names."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hybrid_memory import settings_doc
from tests.docs.blocks import REPO, pages, shell_blocks

README_MAX_LINES = 300
SETTING = re.compile(r"\bHYBRID_MEMORY_[A-Z0-9_]*[A-Z0-9]\b")

# The words of the project's own planning, which mean nothing to a user.
PLANNING = re.compile(
    r"\bissues?[ -]?#?\d+|\bbars?\b|\bsessions? of work\b|\b(last|this|earlier|later|previous) session\b"
    r"|\bthe brief\b|\bmilestones?\b|\bsprints?\b",
    re.IGNORECASE,
)

# A lab notebook's words: what changed and when, instead of what is. A reference page says what the
# product does; how it came to be belongs in the history of the repository.
NOTEBOOK = re.compile(
    r"\(new\)|\btoday'?s\b|\bno longer\b|\b(we|it|this|that|they|which) used to\b|\bused to be\b"
    r"|\b(this|last|previous|next|that) round\b|\bround reason\b|\bwe (tried|kept|dropped|changed)\b"
    r"|\b(was|were) kept\b|\bour (development )?machines?\b|\bbefore\s*/\s*now\b|\bbefore and now\b"
    r"|^\|\s*(before|now)\s*\|"
    r"|\bpreviously\b|\bformerly\b|\bas of (this|the last) (change|commit)\b|\bchanged from\b"
    r"|\bthe old (default|way|code)\b|\bnew default\b|\bfor now\b|\bnot yet\b",
    re.IGNORECASE,
)


def _documentation() -> list[str]:
    return [*map(str, pages()), *map(str, sorted((REPO / "bench").glob("*.md")))]


def test_the_readme_reads_in_five_minutes() -> None:
    lines = (REPO / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= README_MAX_LINES, (
        f"README.md has {lines} lines, more than {README_MAX_LINES}: move reference material to docs/"
    )


QUOTED = re.compile(r'"[^"]*"|`[^`]*`')
"""Quoted text and code: what a user or a tool says, not the page's own voice."""


def _lines_matching(pattern: re.Pattern[str], *, skip_quoted: bool = False) -> list[str]:
    return [
        f"{path}:{number}: {match.group(0)!r}"
        for path in _documentation()
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), start=1)
        for match in pattern.finditer(QUOTED.sub("", line) if skip_quoted else line)
    ]


def test_no_page_speaks_of_issues_bars_or_sessions_of_work() -> None:
    found = _lines_matching(PLANNING)
    assert found == [], f"planning words in the documentation: {found}"


def test_no_page_reads_as_a_lab_notebook() -> None:
    found = _lines_matching(NOTEBOOK, skip_quoted=True)
    assert found == [], f"say what is, not what changed: {found}"


PLANNING_CAUGHT = [
    "the issue-9 bars",
    "Against the bars of issue 12",
    "at the start of the last session",
    "a bar",
    "as the brief asks",
    "the next milestone",
]
PLANNING_KEPT = [
    "a recall session",
    "each client's MCP session",
    "Claude Code sessions",
    "bartender",
    "a brief note",
]
NOTEBOOK_CAUGHT = [
    "| speakers 0.8 (new) | 0.833 |",
    "one thing of today's default",
    "it no longer refuses",
    "it used to block",
    "half was kept as the round reason",
    "No Neo4j runs on our development machines",
    "before / now",
    "| now | 0.736 |",
    "| before | 0.701 |",
    "we tried BM25 first",
    "previously the default",
    "the old default was 0.3",
    "kept off for now",
    "not yet supported",
    "in this round",
]
NOTEBOOK_KEPT = [
    "a second store round",
    "the model is used to rank hits",
    "Weak hits are kept, not dropped",
    "redacted before anything is stored",
    "the newest first, then the older ones",
    "a note whose validity ended",
    "what happens now is",
    "Today at 09:00",
]


@pytest.mark.parametrize(
    ("rule", "caught", "kept"),
    [(PLANNING, PLANNING_CAUGHT, PLANNING_KEPT), (NOTEBOOK, NOTEBOOK_CAUGHT, NOTEBOOK_KEPT)],
    ids=["planning", "notebook"],
)
def test_each_rule_catches_its_words_and_keeps_what_is_not(
    rule: re.Pattern[str], caught: list[str], kept: list[str]
) -> None:
    assert [text for text in caught if rule.search(text)] == caught
    assert [text for text in kept if rule.search(text)] == []


def test_the_notebook_rule_leaves_quoted_examples_alone() -> None:
    example = 'one-off requests ("don\'t change it for now") make no note; `--no-longer` is a flag'
    assert NOTEBOOK.search(example)
    assert not NOTEBOOK.search(QUOTED.sub("", example))


def test_ci_runs_the_readmes_test_command() -> None:
    readme = REPO / "README.md"
    section = readme.read_text(encoding="utf-8").split("## Run the tests", 1)[1].split("\n## ", 1)[0]
    commands = [b.text.strip() for b in shell_blocks(readme) if b.text.strip() in section]
    assert commands == ["bash scripts/test.sh"]
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert any(line.startswith(commands[0]) for line in ci), ".ci/run must run the README's test command"


# Read by the Claude Code plugin's launcher (a shell script), not by the settings tree.
LAUNCHER = REPO / "plugins" / "hybrid-memory" / "bin" / "hybrid-memory"
LAUNCHER_VARIABLES = {"HYBRID_MEMORY_COMMAND"}


def test_every_setting_the_docs_name_exists() -> None:
    launcher = LAUNCHER.read_text(encoding="utf-8")
    assert all(f"${{{name}" in launcher or f"${name}" in launcher for name in LAUNCHER_VARIABLES)
    known = set(re.findall(r"`([A-Z0-9_]+)`", settings_doc.render())) | LAUNCHER_VARIABLES
    named = {
        (str(path), name)
        for path in _documentation()
        for name in SETTING.findall(Path(path).read_text(encoding="utf-8"))
        if not name.startswith("HYBRID_MEMORY_TEST_")
    }
    unknown = sorted(f"{path}: {name}" for path, name in named if name not in known)
    assert unknown == [], f"settings named in the docs that settings.py does not have: {unknown}"


# Pages other changes add beside these; a link to one is checked once the page exists.
WRITTEN_ELSEWHERE = {"docs/claude-code.md", "docs/cli.md", "docs/redaction.md"}
LINK = re.compile(r"\]\((?!https?://)([^)#\s]*)(?:#([^)\s]+))?\)")


def _anchors(path: Path) -> set[str]:
    """GitHub's anchors for the headings of ``path``: lower case, punctuation dropped, spaces as dashes."""
    headings = re.findall(r"^#+ (.+)$", path.read_text(encoding="utf-8"), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_every_link_between_pages_resolves() -> None:
    broken = []
    for page in map(Path, _documentation()):
        for target, anchor in LINK.findall(page.read_text(encoding="utf-8")):
            path = (page.parent / target).resolve() if target else page
            name = str(path.relative_to(REPO)) if path.is_relative_to(REPO) else str(path)
            if not path.exists():
                if name not in WRITTEN_ELSEWHERE:
                    broken.append(f"{page.relative_to(REPO)}: {target}")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{page.relative_to(REPO)}: {target}#{anchor}")
    assert broken == [], f"links to no page or no heading: {broken}"


def _tool_names_in_table(path: Path) -> set[str]:
    """Every tool a page's table names in its first column (``a(…)`` / ``b``, ``c``)."""
    names: set[str] = set()
    for row in re.findall(r"^\| (`[a-z_]+.*?) \|", path.read_text(encoding="utf-8"), re.MULTILINE):
        names.update(re.findall(r"`([a-z_]+)[(`]", row))
    return names


def test_the_tool_tables_name_every_tool_the_server_lists() -> None:
    from hybrid_memory.tools.registry import TOOLS

    served = {spec.fn.__name__ for spec in TOOLS}
    for page in (REPO / "README.md", REPO / "docs" / "tools.md"):
        named = _tool_names_in_table(page)
        assert named >= served, f"{page.name} does not describe the tools {sorted(served - named)}"
        assert named <= served, f"{page.name} names tools the server lacks: {sorted(named - served)}"


def test_every_argument_the_tools_page_names_is_a_real_argument() -> None:
    import inspect

    from hybrid_memory.tools.registry import TOOLS

    arguments = {spec.fn.__name__: set(inspect.signature(spec.fn).parameters) for spec in TOOLS}
    page = (REPO / "docs" / "tools.md").read_text(encoding="utf-8")
    unknown = [
        f"{tool}({name})"
        for tool, listed in re.findall(r"`([a-z_]+)\(([^)]*)\)`", page)
        for name in (part.split("=")[0].strip().rstrip("?") for part in listed.split(","))
        if tool in arguments and name and name not in arguments[tool]  # prompts are checked by name only
    ]
    assert unknown == [], f"docs/tools.md names arguments the tools do not have: {unknown}"
