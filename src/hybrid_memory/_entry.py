"""The ``hybrid-memory`` command's entry point: hooks take a fast path before the CLI (and pydantic) load.

A hook runs on every prompt; importing the CLI's settings alone costs about 0.2 s.
"""

from __future__ import annotations

import sys


def main() -> int:
    from hybrid_memory.private import owner_only_umask

    owner_only_umask()  # whatever this process writes under the data dir is its owner's alone
    argv = sys.argv[1:]
    if argv[:2] == ["hook", "opencode"]:  # opencode's plugin: its messages become a transcript
        from hybrid_memory.integrations.opencode import main as opencode_hook

        return opencode_hook(argv[2:])
    if argv[:1] == ["hook"]:
        from hybrid_memory.integrations.hooks import main as hook

        return hook(argv[1:])
    if argv in (["serve", "--detached-host"], ["--detached-host", "serve"]):
        # The plugin's MCP server: a relay to the host, which a hook or this starts detached.
        from pathlib import Path

        from hybrid_memory.host.stdio_relay import serve_relay
        from hybrid_memory.integrations.config import HookConfig

        return serve_relay(Path(HookConfig.from_env().data_dir))
    if argv[:1] == ["serve"] and "--headless" in argv:
        # What a client starts when it finds no host: ends at once when one hosts already.
        from hybrid_memory.host.lock import claim_for_headless

        if not claim_for_headless(argv):
            return 0
    from hybrid_memory.cli import main as cli

    return cli(argv)
