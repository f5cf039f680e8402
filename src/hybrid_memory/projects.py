"""How a directory names a project: one rule for the MCP server (its client's roots) and the hooks (cwd).

Stdlib only: the hooks import it on their fast path.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote, unquote, urlparse

MAX_PROJECT_CHARS = 128


def project_name(uri: str, name: str | None = None) -> str | None:
    """A root's name, else the last segment of its path; None when neither gives one."""
    label = (name or "").strip()
    if not label:
        label = unquote(urlparse(uri).path).rstrip("/").rsplit("/", 1)[-1].strip()
    return label[:MAX_PROJECT_CHARS] or None


def root_uri(directory: str | Path) -> str:
    """The ``file://`` URI an MCP client gives as the root for ``directory``."""
    return "file://" + quote(str(Path(directory).absolute()))
