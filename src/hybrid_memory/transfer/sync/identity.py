"""What a project is called between machines: its repository's remote URL, not its local path.

A project is the path of its repository's main work tree (:mod:`hybrid_memory.projects`), and
that path differs from one machine to the next. Between machines a project that is a git
repository with a remote goes by that remote's URL, written one way whatever the spelling
(``git@github.com:ada/api.git``, ``https://github.com/ada/api`` and
``ssh://git@github.com/ada/api`` are all ``github.com/ada/api``). Any other project (a folder
outside git, a repository without a remote, a configured name) goes by its own name.

On arrival a name is matched to a local project the same way: a project of the store, or the
directory the command runs in, whose repository has that remote; with none, the items wait
under the name itself, and move to the repository's project when a later sync finds it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path
from urllib.parse import urlparse

from hybrid_memory.projects import project_of_directory, repository

_SECTION = re.compile(r'^\s*\[\s*remote\s+"(?P<name>[^"]+)"\s*\]\s*$')
_URL = re.compile(r"^\s*url\s*=\s*(?P<url>.+?)\s*$")
_SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>(?!//).+)$")
"""scp-like syntax, ``[user@]host:path``, which git reads as SSH."""


def normalise_url(url: str) -> str:
    """One spelling of a git remote URL: ``host/path`` (lower-case host, no user, port, ``.git``)."""
    text = url.strip()
    parsed = urlparse(text)
    if parsed.scheme and parsed.netloc:
        host, path = (parsed.hostname or "").lower(), parsed.path
    elif parsed.scheme == "file":
        host, path = "", parsed.path
    elif (scp := _SCP.match(text)) is not None and not Path(text).exists():
        host, path = scp["host"].lower(), scp["path"]
    else:
        host, path = "", str(Path(text).expanduser().absolute())
    path = path.rstrip("/").removesuffix(".git").rstrip("/")
    if host:
        return f"{host}/{path.lstrip('/')}"
    return path


def remote_url(directory: str | Path) -> str | None:
    """The URL of the remote of ``directory``'s repository (``origin``, else the first); None when
    it has none or is no repository. Read from the repository's config, without a git process."""
    found = repository(directory)
    if found is None:
        return None
    try:
        config = (found.common_dir / "config").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    remotes: dict[str, str] = {}
    current: str | None = None
    for line in config.splitlines():
        if line.lstrip().startswith("["):
            section = _SECTION.match(line)
            current = section["name"] if section else None
        elif current is not None and current not in remotes and (url := _URL.match(line)):
            remotes[current] = url["url"]
    if not remotes:
        return None
    return remotes.get("origin") or next(iter(remotes.values()))


def shared_name(project: str) -> str:
    """What ``project`` is called between machines: its repository's remote, else itself."""
    if not project.startswith("/") or not Path(project).is_dir():
        return project
    url = remote_url(project)
    return normalise_url(url) if url else project


def local_projects(projects: Iterable[str], cwd: str | None) -> dict[str, str]:
    """Shared name -> local project, for the store's ``projects`` and the directory ``cwd``.

    The directory the command runs in comes first: a clone there is where its memory belongs.
    """
    found: dict[str, str] = {}
    if cwd is not None and repository(cwd) is not None:
        here = project_of_directory(cwd)
        found[shared_name(here)] = here
    for project in projects:
        found.setdefault(shared_name(project), project)
    return found
