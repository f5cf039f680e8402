"""The pure rules behind consolidation, distillation parsing and the graph map."""

from __future__ import annotations

import pytest

from hybrid_memory.service.knowledge.capture.consolidate import changed_value, same_subject
from hybrid_memory.service.knowledge.distill import parse
from hybrid_memory.service.knowledge.graphmap import communities


@pytest.mark.parametrize(
    ("old", "new", "changed"),
    [
        ("Carol lives in Porto.", "Carol lives in Lisbon.", True),
        ("The project deadline is March 3.", "The project deadline is April 10.", True),
        ("Alice lives in Porto.", "Bob lives in Porto.", False),
        ("Alice is a nurse.", "Bob is a nurse.", False),
        ("Bob is the user's manager.", "The user's manager is Bob.", False),
        ("Flaky tests mostly come from shared state.", "Most flaky tests are caused by shared state.", False),
        ("The user's sister Alice lives in Porto.", "The user's sister Alice lives in Lisbon.", True),
    ],
)
def test_a_changed_value_needs_the_same_subject_and_a_new_value_on_each_side(
    old: str, new: str, changed: bool
) -> None:
    assert changed_value(old, new) is changed


def test_notes_opening_with_two_different_names_are_not_the_same_subject() -> None:
    assert not same_subject("Alice is a nurse.", "Bob is a nurse.")
    assert same_subject("Flaky tests are rare.", "Most flaky tests are rare.")


def test_parse_keeps_valid_notes_and_links_and_drops_unknown_sources() -> None:
    answer = (
        'Sure! {"notes": [{"key": "a", "type": "fact", "content": "X is 1.", "sources": ["m1", "zz"]},'
        ' {"key": "b", "type": "nonsense", "content": "dropped"},'
        ' {"key": "c", "type": "concept", "content": "X"}],'
        ' "links": [{"from_key": "a", "to_key": "c", "relation": "part_of"},'
        ' {"from_key": "a", "to_key": "b", "relation": "part_of"}]} Done.'
    )
    result = parse(answer, {"m1"})
    assert [(n.key, n.sources) for n in result.notes] == [("a", ["m1"]), ("c", [])]
    assert [(lk.from_key, lk.to_key) for lk in result.links] == [("a", "c")]
    assert parse("no json here", {"m1"}).notes == []


def test_label_propagation_splits_two_triangles_joined_by_one_link() -> None:
    graph = {
        "a": {"b", "c"},
        "b": {"a", "c"},
        "c": {"a", "b", "d"},
        "d": {"c", "e", "f"},
        "e": {"d", "f"},
        "f": {"d", "e"},
        "g": set(),
    }
    labels = communities(graph)
    assert labels["a"] == labels["b"] == labels["c"]
    assert labels["d"] == labels["e"] == labels["f"]
    assert labels["a"] != labels["d"]
    assert labels["g"] == "g"
