"""A prompt hook's process, against a host that answers at once: what it loads, what it prints.

Every prompt of a session waits for this process; the standard modules it leaves out are
those that cost it most to import (``typing``, ``socket`` with ``selectors``, ``dataclasses``,
``json`` with ``re`` and ``enum``, ``pathlib`` with ``urllib.parse`` and ``fnmatch``, ``collections``).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ANSWER = {"jsonrpc": "2.0", "id": 1, "result": {"text": "remembered", "ids": ["m1"], "tokens": 3}}
SLOW_TO_IMPORT = {
    "typing",
    "socket",
    "selectors",
    "dataclasses",
    "inspect",
    "asyncio",
    "subprocess",
    "json",
    "re",
    "enum",
    "pathlib",
    "urllib.parse",
    "fnmatch",
    "contextlib",
    "collections",
}


@pytest.fixture
def host(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, list[dict[str, object]]]]:
    """A data dir whose ``serve.sock`` answers every injection request with :data:`ANSWER`."""
    data_dir = Path(tmp_path_factory.mktemp("hm"))
    listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listening.bind(str(data_dir / "serve.sock"))
    listening.listen()
    asked: list[dict[str, object]] = []

    def answer() -> None:
        while True:
            try:
                conn, _ = listening.accept()
            except OSError:
                return
            with conn, conn.makefile("rb") as request:
                asked.append(json.loads(request.readline()))
                conn.sendall(json.dumps(ANSWER).encode() + b"\n")

    thread = threading.Thread(target=answer, daemon=True)
    thread.start()
    yield data_dir, asked
    listening.close()


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HYBRID_MEMORY_")}
    return {**env, "HYBRID_MEMORY_DATA_DIR": str(data_dir)}


PAYLOAD = {"session_id": "s1", "cwd": "/tmp", "prompt": "What did we decide about the deploy last time?"}


def test_a_prompt_hook_loads_none_of_the_slowest_standard_modules(
    host: tuple[Path, list[dict[str, object]]],
) -> None:
    data_dir, asked = host
    probe = (
        "import io, sys\n"
        "from hybrid_memory._entry import main\n"  # what the command imports first
        "from hybrid_memory.integrations.hooks import run\n"
        "out = io.StringIO()\n"
        "run('user-prompt-submit', io.StringIO(sys.argv[1]), out, sys.stderr)\n"
        "modules = sorted(sys.modules)\n"
        "import json\n"  # the probe's own, to say what it saw
        "print(json.dumps({'out': out.getvalue(), 'modules': modules}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, json.dumps(PAYLOAD)],
        env=_env(data_dir),
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stderr == ""
    seen = json.loads(done.stdout)
    assert "remembered" in seen["out"]  # it did ask the host, and printed its answer
    assert len(asked) == 1
    assert set(seen["modules"]) & SLOW_TO_IMPORT == set()


def test_the_hook_command_prints_the_answer_and_exits_0(host: tuple[Path, list[dict[str, object]]]) -> None:
    data_dir, asked = host
    command = Path(sys.executable).parent / "hybrid-memory"
    done = subprocess.run(
        [str(command), "hook", "user-prompt-submit"],
        input=json.dumps(PAYLOAD),
        env=_env(data_dir),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0
    assert done.stderr == ""
    output = json.loads(done.stdout)  # flushed before the process ends without the interpreter's teardown
    assert output["hookSpecificOutput"]["additionalContext"] == "remembered"
    params = asked[0]["params"]
    assert isinstance(params, dict)
    assert params["prompt"] == PAYLOAD["prompt"]
