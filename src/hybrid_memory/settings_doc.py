"""The configuration reference, generated from the settings tree so that it cannot drift.

``python -m hybrid_memory.settings_doc > docs/configuration.md`` writes the page;
``python -m hybrid_memory.settings_doc --check docs/configuration.md`` says whether it is current.
Every field needs a description (the docstring under it in ``settings.py``): its first paragraph
is the page's one line of meaning; later paragraphs are for readers of the code.
"""

from __future__ import annotations

import argparse
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal, Union, get_args, get_origin

import annotated_types
from pydantic import AliasChoices, SecretStr
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined
from pydantic_settings import BaseSettings

from hybrid_memory.settings import Settings

REGENERATE = "python -m hybrid_memory.settings_doc > docs/configuration.md"

_INTRO = """\
# Configuration

<!-- Generated from src/hybrid_memory/settings.py; do not edit by hand. Regenerate with:
     {regenerate} -->

Every setting is an environment variable, read once when a command starts. Flags given on the
command line (`--host`, `--port`, `--project`, ...) win over the variables. A bad value stops the
command with one line on stderr naming the variable and exit code 2.

Where a variable has two names (`QDRANT_URL` or `HYBRID_MEMORY_QDRANT_URL`), either works.
"Unset" means the variable is absent; the meaning column says what happens then.
"""


class UndocumentedSettingError(ValueError):
    """A settings field has no description, so the reference would have a blank line for it."""


def env_names(name: str, field: FieldInfo, prefix: str) -> list[str]:
    """The environment variables that set ``field``: its aliases, else the class prefix + its name."""
    alias = field.validation_alias
    if isinstance(alias, AliasChoices):
        return [choice for choice in alias.choices if isinstance(choice, str)]
    if isinstance(alias, str):
        return [alias]
    return [f"{prefix}{name}".upper()]


def _scalar_type(annotation: Any) -> str:
    if get_origin(annotation) is Literal:
        return " \\| ".join(f"`{value}`" for value in get_args(annotation))
    if get_origin(annotation) is list:
        return "comma-separated list"
    names = {bool: "boolean", int: "integer", float: "number", str: "text", Path: "path", SecretStr: "secret"}
    return names.get(annotation, getattr(annotation, "__name__", str(annotation)))


def type_text(field: FieldInfo) -> str:
    """A reader's name for the field's type, with its bounds (``integer ≥ 1``)."""
    annotation = field.annotation
    if get_origin(annotation) in (Union, types.UnionType):
        annotation = next(arg for arg in get_args(annotation) if arg is not type(None))
    bounds = {
        annotated_types.Ge: "≥",
        annotated_types.Gt: ">",
        annotated_types.Le: "≤",
        annotated_types.Lt: "<",
    }
    found = {
        sign: _number(getattr(item, kind.__name__.lower()))
        for item in field.metadata
        for kind, sign in bounds.items()
        if isinstance(item, kind)
    }
    if "≥" in found and "≤" in found:
        return f"{_scalar_type(annotation)}, {found['≥']} to {found['≤']}"
    return " ".join([_scalar_type(annotation), *(f"{sign} {limit}" for sign, limit in found.items())])


def _number(value: object) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def default_text(field: FieldInfo) -> str:
    """The default as a user would write it; a computed default is described in the meaning."""
    if field.default is PydanticUndefined:
        return "empty" if field.default_factory is list else "see meaning"
    value = field.default
    if value is None:
        return "unset"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, int | float):
        return _number(value)
    return f"`{value}`"


def meaning(owner: str, name: str, field: FieldInfo) -> str:
    """The description's first paragraph on one line, for a table cell."""
    if not field.description:
        raise UndocumentedSettingError(
            f"{owner}.{name} has no description: write a docstring under it in settings.py "
            f"saying what it does, then run {REGENERATE}"
        )
    first = field.description.strip().split("\n\n")[0]
    return " ".join(first.split()).replace("``", "`").replace("|", "\\|")


def _prefix(cls: type[BaseSettings]) -> str:
    return str(cls.model_config.get("env_prefix", ""))


def _is_section(field: FieldInfo) -> bool:
    annotation = field.annotation
    return isinstance(annotation, type) and issubclass(annotation, BaseSettings)


_TABLE_HEAD = ("| variable | type | default | meaning |", "|---|---|---|---|")


def _table(cls: type[BaseSettings]) -> Iterator[str]:
    yield from _TABLE_HEAD
    for name, field in cls.model_fields.items():
        if _is_section(field):
            continue
        names = " or ".join(f"`{env}`" for env in env_names(name, field, _prefix(cls)))
        row = (names, type_text(field), default_text(field), meaning(cls.__name__, name, field))
        yield "| " + " | ".join(row) + " |"


def _intro(cls: type[BaseSettings]) -> str:
    doc = (cls.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(doc.split()).replace("``", "`")


def render(root: type[BaseSettings] = Settings) -> str:
    """The whole configuration page for the settings tree rooted at ``root``."""
    lines = [_INTRO.format(regenerate=REGENERATE), "## General", "", *_table(root)]
    for name, field in root.model_fields.items():
        if not _is_section(field):
            continue
        section: type[BaseSettings] = field.annotation  # type: ignore[assignment]  # _is_section said so
        lines += ["", f"## {meaning(root.__name__, name, field)}", "", _intro(section), "", *_table(section)]
    if root is Settings:
        lines += _hooks_section()
    return "\n".join(lines) + "\n"


def _hooks_section() -> list[str]:
    """The hooks' variables, read without pydantic (:mod:`hybrid_memory.integrations.config`)."""
    from hybrid_memory.integrations.config import HOOK_VARIABLES, HOOKS_INTRO

    lines = ["", "## Claude Code plugin hooks", "", HOOKS_INTRO.replace("``", "`"), "", *_TABLE_HEAD]
    for variable in HOOK_VARIABLES:
        if isinstance(variable.default, bool):
            kind, default = "boolean", f"`{str(variable.default).lower()}`"
        else:
            number = "integer" if isinstance(variable.default, int) else "number"
            kind = f"{number}, {_number(variable.low)} to {_number(variable.high)}"
            default = _number(variable.default)
        text = " ".join(variable.meaning.split()).replace("``", "`").replace("|", "\\|")
        lines.append(f"| `{variable.env}` | {kind} | {default} | {text} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m hybrid_memory.settings_doc",
        description="Print the configuration reference (docs/configuration.md) generated from settings.py.",
    )
    parser.add_argument(
        "--check", type=Path, metavar="PAGE", help="compare PAGE with the generated page instead of printing"
    )
    args = parser.parse_args(argv)
    page = render()
    if args.check is None:
        sys.stdout.write(page)
        return 0
    current = args.check.read_text(encoding="utf-8") if args.check.exists() else ""
    if current == page:
        return 0
    print(f"{args.check} does not match settings.py; regenerate it: {REGENERATE}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    raise SystemExit(main())
