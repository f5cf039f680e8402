"""How the model cites a memory: ``[memory:<id>]``, the same in every text it reads."""

from __future__ import annotations

import re

CITATION = re.compile(r"\[memory:([^\]\s]+)\]")
"""A citation in a text; its group is the memory's id."""
HOW_TO_CITE = "cite as [memory:<id>]"


def cite(memory_id: str) -> str:
    """The citation of one memory: ``[memory:<id>]``."""
    return f"[memory:{memory_id}]"


def cited(text: str) -> list[str]:
    """The ids ``text`` cites, in order, each once."""
    return list(dict.fromkeys(CITATION.findall(text)))
