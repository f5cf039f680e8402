"""Starting a headless host for a data dir, detached: what hooks and ``serve --detached-host`` do.

Stdlib only: the hooks import it on their fast path.
"""

from __future__ import annotations

import sys
from pathlib import Path

HOST_LOG = "host.log"
"""Where a detached host writes its log (it has no terminal), in the data dir."""


def start_headless_host(data_dir: Path, env: dict[str, str] | None = None) -> None:
    """Start ``hybrid-memory serve --headless`` on ``data_dir`` in its own session, off the caller's pipes.

    It outlives the caller and exits after an idle period; when another process hosts
    already, it exits at once.
    """
    import subprocess  # only here: a hook that finds a host running never needs it

    data_dir.mkdir(parents=True, exist_ok=True)
    log = open(data_dir / HOST_LOG, "ab")  # noqa: SIM115 - handed to the child, closed here after
    try:
        subprocess.Popen(
            [sys.executable, "-m", "hybrid_memory", "serve", "--headless", "--data-dir", str(data_dir)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            env=env,
            close_fds=True,
        )
    finally:
        log.close()
