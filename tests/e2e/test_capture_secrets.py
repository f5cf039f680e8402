"""An AWS key pair the assistant writes, captured by the real hooks: no secret kept, none injected back."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.claude_code import hook_env, stop_hosts

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

HOOK = Path(sys.executable).parent / "hybrid-memory"
SESSION = "0c7d2a51-aws-pair"
_RNG = random.Random(2028)
_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _pair() -> tuple[str, str]:
    key_id = "AKIA" + "".join(_RNG.choice("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") for _ in range(16))
    return key_id, "".join(_RNG.choice(_B64) for _ in range(36)) + "7Kq/"


PAIRS = [_pair() for _ in range(5)]
WRITINGS = [
    "I created the uploader's credentials; the AWS pair ({0} / {1}) is in the team vault now.",
    "Put this in ~/.aws/credentials under [backup]:\n\naws_access_key_id={0}\naws_secret_access_key={1}",
    "For the shell session run:\n```\nexport AWS_ACCESS_KEY_ID={0}\nexport AWS_SECRET_ACCESS_KEY={1}\n```",
    "Use key id {0} with secret {1} for the nightly export job.",
    "The CI variable AWS_CREDS holds {0}:{1} (id:secret), as the deploy script expects.",
]


@pytest.fixture
def data_dir(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "data"
    yield path
    stop_hosts(path)


def _hook(event: str, payload: dict[str, object], data_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(HOOK), "hook", event],
        input=json.dumps(payload),
        env=hook_env(data_dir, HYBRID_MEMORY_HOOK_DETACH="0"),
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )


def _line(uuid: str, role: str, content: object) -> str:
    entry = {
        "type": role,
        "uuid": uuid,
        "timestamp": "2026-11-20T10:00:00.000Z",
        "cwd": "/home/dev/uploader",
        "sessionId": SESSION,
        "message": {"role": role, "content": content},
    }
    return json.dumps(entry)


def test_an_aws_pair_in_five_writings_is_kept_nowhere_and_never_injected(
    tmp_path: Path, data_dir: Path
) -> None:
    cwd = tmp_path / "uploader"
    cwd.mkdir()
    transcript = tmp_path / f"{SESSION}.jsonl"
    lines = []
    for i, (writing, (key_id, secret)) in enumerate(zip(WRITINGS, PAIRS, strict=True)):
        lines.append(_line(f"u-{i}", "user", f"Set up AWS access for the uploader, step {i}."))
        text = writing.format(key_id, secret)
        lines.append(_line(f"a-{i}", "assistant", [{"type": "text", "text": text}]))
    transcript.write_text("\n".join(lines) + "\n")
    payload = {"session_id": SESSION, "transcript_path": str(transcript), "cwd": str(cwd)}
    done = _hook("stop", {**payload, "hook_event_name": "Stop"}, data_dir)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")

    prompt = {
        "session_id": "next",
        "cwd": str(cwd),
        "prompt": "Which AWS key id and secret does the uploader use?",
    }
    asked = _hook("user-prompt-submit", {**prompt, "hook_event_name": "UserPromptSubmit"}, data_dir)
    started = _hook(
        "session-start", {"session_id": "next", "cwd": str(cwd), "hook_event_name": "SessionStart"}, data_dir
    )
    assert asked.returncode == 0, asked.stderr
    assert started.returncode == 0, started.stderr
    injected = json.loads(asked.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "[REDACTED:aws_key]" in injected  # the turns came back, their secrets did not
    secrets = [s for pair in PAIRS for s in pair]
    assert [s for s in secrets if s in asked.stdout + started.stdout] == []

    stop_hosts(data_dir)
    files = [p for p in data_dir.rglob("*") if p.is_file()]
    assert any(b"nightly export job" in p.read_bytes() for p in files)  # the store is searchable as bytes
    assert {str(p): [s for s in secrets if s.encode() in p.read_bytes()] for p in files} == {
        str(p): [] for p in files
    }
