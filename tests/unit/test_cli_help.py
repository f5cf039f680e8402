"""Every command and option of ``hybrid-memory`` explains itself in ``--help``."""

from __future__ import annotations

import argparse

from hybrid_memory.cli import _parser


def _parsers(parser: argparse.ArgumentParser, path: str) -> list[tuple[str, argparse.ArgumentParser]]:
    found = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _parsers(sub, f"{path} {name}")
    return found


def test_every_option_of_every_command_has_help_text() -> None:
    missing = [
        f"{path} {'/'.join(action.option_strings) or action.dest}"
        for path, parser in _parsers(_parser(), "hybrid-memory")
        for action in parser._actions
        if not isinstance(action, argparse._SubParsersAction) and not action.help
    ]
    assert missing == []


def test_no_help_points_at_a_file_the_wheel_does_not_ship() -> None:
    texts = [
        str(action.help) + str(parser.description)
        for _, parser in _parsers(_parser(), "hybrid-memory")
        for action in parser._actions
    ]
    assert [t for t in texts if "docs/" in t or ".md" in t] == []
