"""The text conventions: questions, words, filler, repeats, citations; and the package stays stdlib-only."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

import pytest

import hybrid_memory.text
from hybrid_memory.text.citation import cite, cited
from hybrid_memory.text.filler import is_filler
from hybrid_memory.text.questions import asks, ends_asking, only_asks
from hybrid_memory.text.repeats import Distinct
from hybrid_memory.text.words import cut, normalized, sentences

TEXT = Path(hybrid_memory.text.__file__).parent


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("How do I run the tests?", True),
        ("how do I run the tests", True),
        ("can you check the logs", True),
        ("qual o comando para subir o servidor", True),
        ("¿Dónde está el fichero?", True),
        ("The build passed. Which branch do I merge into?", True),
        ("When you deploy, migrate first.", False),
        ("Do not push to main.", False),
        ("Deploy the migration to staging", False),
        ("is the build green", True),
        ("Run make test and tell me what fails", False),
        ("", False),
    ],
)
def test_a_message_asks_when_a_sentence_ends_in_a_question_mark_or_opens_as_a_question(
    text: str, expected: bool
) -> None:
    assert asks(text) is expected


@pytest.mark.parametrize(
    ("text", "ends", "only"),
    [
        ("What's your favourite book?", True, True),
        ("Hey Mel! How are you?", True, True),
        ("I moved to Lisbon last spring with my sister. Have you been?", True, False),
        ("How do I run it? I tried make test already and it failed.", False, False),
        ("how do I run it", False, False),
    ],
)
def test_a_turn_ends_asking_and_only_asks_when_it_states_nothing(text: str, ends: bool, only: bool) -> None:
    assert ends_asking(text) is ends
    assert only_asks(text) is only


def test_normalized_ignores_case_punctuation_and_spacing() -> None:
    assert normalized("  Run   the TESTS, please!  ") == "run the tests please"
    assert normalized("don't") == "don't"


def test_sentences_split_after_end_marks_and_fold_spacing() -> None:
    assert sentences("One.  Two?\nThree!  four") == ["One.", "Two?", "Three!", "four"]


def test_cut_keeps_a_short_text_and_marks_where_a_long_one_was_cut() -> None:
    assert cut("a  b\nc", 10) == "a b c"
    assert cut("abcdefghij", 5) == "abcd…"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Done.", True),
        ("Let me look.", True),
        ("ok, thanks!", True),
        ("", True),
        ("Done: the port is 8080.", False),
    ],
)
def test_filler_is_an_acknowledgement_with_nothing_of_its_own(text: str, expected: bool) -> None:
    assert is_filler(text) is expected


def test_a_text_is_new_once_and_a_retelling_under_a_label_is_not() -> None:
    seen = Distinct("Use port 8080 for the dev server")
    assert not seen.new("use port 8080 for the dev server!")
    assert seen.retold("Remember: use port 8080 for the dev server")
    assert seen.new("The staging server uses port 9090")


def test_a_citation_is_built_and_read_back_in_one_format() -> None:
    assert cite("abc-1") == "[memory:abc-1]"
    text = f"- {cite('a1')} x; see {cite('b2')} and {cite('a1')} again; [memory: broken]"
    assert cited(text) == ["a1", "b2"]


def _imports(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
            found.add(node.module)
    return found


def test_the_text_package_imports_only_the_standard_library_and_itself() -> None:
    foreign = {
        f"{path.name}: {name}"
        for path in TEXT.glob("*.py")
        for name in _imports(path)
        if name.partition(".")[0] not in sys.stdlib_module_names
        and name != "__future__"
        and not name.startswith("hybrid_memory.text")
    }
    assert foreign == set()
