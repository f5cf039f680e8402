"""``hybrid-memory cleanup [--dry-run]`` as a child process over the configured stores."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.models import MessageIn, Scope
from hybrid_memory.server.app import open_app
from hybrid_memory.service import ThreadDraft
from hybrid_memory.settings import LifecycleSettings
from tests.conftest import REPO, make_settings, model_dir

pytestmark = [pytest.mark.subprocess, pytest.mark.model]

SCOPE = Scope(project="test")
LIMITS = {
    "HYBRID_MEMORY_RETENTION_DAYS": "30",
    "HYBRID_MEMORY_MAX_ITEMS": "2",
    "HYBRID_MEMORY_EVICTION_POLICY": "fifo",
}


def hybrid_memory(command: str, data_dir: Path, *flags: str, **env: str) -> subprocess.CompletedProcess[str]:
    """Run ``hybrid-memory COMMAND`` on ``data_dir`` for project ``test``, with extra environment."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HYBRID_MEMORY_", "QDRANT_", "NEO4J_"))}
    clean.update({"HYBRID_MEMORY_EMBEDDING_MODEL_PATH": str(model_dir()), **env})
    argv = [sys.executable, "-m", "hybrid_memory", command, "--data-dir", str(data_dir), "--project", "test"]
    return subprocess.run(
        [*argv, *flags],
        env=clean,
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def cleanup(data_dir: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    return hybrid_memory("cleanup", data_dir, *flags, **LIMITS)


async def test_cleanup_command_previews_then_applies_retention_and_limits(
    tmp_path: Path, embedder: Embedder
) -> None:
    data = tmp_path / "data"
    old = datetime(2020, 1, 1, tzinfo=UTC)
    messages = [MessageIn(role="user", content=f"Message number {i}.", id=f"m{i}") for i in range(4)]
    messages[0] = messages[0].model_copy(update={"created_at": old})
    # Stored without limits, as before the limits were configured.
    async with open_app(make_settings(data), embedder) as app:
        ids = (await app.service.remember_thread(SCOPE, ThreadDraft("t", messages))).memory_ids

    dry = cleanup(data, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    lines = dry.stdout.splitlines()
    assert [line.split()[:3] for line in lines[:-1]] == [
        ["expired", "message", ids[0]],
        ["max_items", "message", ids[1]],
        ["max_items", "message", ids[2]],
    ]
    assert lines[-1] == (
        "project test: 1 expired memories would be deleted, 2 evicted (replaced by one summary); "
        "nothing changed (--dry-run)"
    )

    done = cleanup(data)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("project test: 1 expired memories deleted, 2 evicted; summary ")

    limits = LifecycleSettings(max_items=2, eviction_policy="fifo", retention_days=30)
    async with open_app(make_settings(data).model_copy(update={"lifecycle": limits}), embedder) as app:
        stats = await app.service.stats(SCOPE)
        assert (stats.items, [k.count for k in stats.by_kind if k.kind.value == "summary"]) == (2, [1])
        assert (await app.service.forget_preview(SCOPE, 10, None)).total == 0


async def test_stats_command_prints_the_projects_counts_as_json(tmp_path: Path, embedder: Embedder) -> None:
    data = tmp_path / "data"
    messages = [MessageIn(role="user", content=f"Message number {i}.", id=f"m{i}") for i in range(3)]
    async with open_app(make_settings(data), embedder) as app:
        await app.service.remember_thread(SCOPE, ThreadDraft("t", messages))

    done = hybrid_memory("stats", data)
    assert done.returncode == 0, done.stderr
    stats = json.loads(done.stdout)
    assert (stats["project"], stats["items"]) == ("test", 3)
    assert {k["kind"]: k["count"] for k in stats["by_kind"]}["message"] == 3


async def test_read_only_commands_never_load_the_model(tmp_path: Path, embedder: Embedder) -> None:
    data = tmp_path / "data"
    messages = [MessageIn(role="user", content=f"Message number {i}.", id=f"m{i}") for i in range(3)]
    async with open_app(make_settings(data), embedder) as app:
        await app.service.remember_thread(SCOPE, ThreadDraft("t", messages))
    # The model's directory without its weights: loading it would fail, and say so on stderr.
    no_weights = tmp_path / "no-weights"
    no_weights.mkdir()
    for part in model_dir().iterdir():
        if part.suffix != ".onnx":
            (no_weights / part.name).symlink_to(part)
    env = {
        "HYBRID_MEMORY_EMBEDDING_MODEL_PATH": str(no_weights),
        "HYBRID_MEMORY_EMBEDDING_MODEL": embedder.model_name,  # the name the store was filled under
        **LIMITS,
    }

    for command, flags in (("stats", ()), ("cleanup", ("--dry-run",)), ("export", ())):
        args = (str(tmp_path / "out.jsonl"), "--quiet") if command == "export" else flags
        done = hybrid_memory(command, data, *args, **env)
        assert done.returncode == 0, done.stderr
        assert "model" not in done.stderr.lower(), done.stderr
