"""The shell blocks of the user documentation, as the runnable-blocks test reads them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
MARKER = "<!-- runnable -->"
SHELLS = {"bash", "sh", "shell", "console"}
_FENCE = re.compile(r"^(?P<indent> *)```(?P<info>[^`]*)$")


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    text: str
    runnable: bool

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    """The documentation a user reads: the README and every page under docs/."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def shell_blocks(path: Path) -> list[Block]:
    """Every fenced shell block of ``path``, runnable when the line before its fence is the marker."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent = len(opening["indent"])
        end = index + 1
        while end < len(lines) and lines[end].strip() != "```":
            end += 1
        language = opening["info"].strip().split(" ")[0]
        if language in SHELLS:
            body = "\n".join(line[indent:] for line in lines[index + 1 : end])
            before = lines[index - 1].strip() if index > 0 else ""
            page = str(path.relative_to(REPO))
            blocks.append(Block(page, index + 1, body + "\n", before == MARKER))
        index = end + 1
    return blocks
