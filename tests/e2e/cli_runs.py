"""Every store command as a child process on one data dir: what each printed and wrote."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from mcp import Client

from tests.conftest import REPO, model_dir
from tests.e2e.servers import server_env
from tests.tools.helpers import call

FACT = "The lighthouse on the north cape is kept by Ines."


@dataclass(frozen=True)
class Run:
    code: int
    stdout: str
    stderr: str


def hybrid_memory(data_dir: Path, *args: str, **env: str) -> Run:
    """``hybrid-memory ARGS`` with the test servers' settings (project ``e2e``) on ``data_dir``."""
    done = subprocess.run(
        [sys.executable, "-m", "hybrid_memory", *args],
        env=server_env(data_dir, **env),
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    return Run(done.returncode, done.stdout, done.stderr)


async def seed(client: Client) -> None:
    """A thread, two notes and a link, written through the server's tools."""
    messages = [
        {"role": "user", "id": "m1", "content": FACT},
        {"role": "assistant", "id": "m2", "content": "Noted: Ines keeps the north cape lighthouse."},
        {"role": "user", "id": "m3", "content": "The ferry to the cape leaves at nine."},
    ]
    await call(client, "remember_thread", thread_id="t1", messages=messages)
    keeper = await call(client, "create_note", content="Ines keeps the lighthouse.", type="fact")
    ferry = await call(client, "create_note", content="The ferry leaves at nine.", type="fact")
    await call(client, "create_link", from_id=keeper["id"], to_id=ferry["id"], relation="relates_to")


def copy_store(source: Path, target: Path) -> None:
    """A stopped store's files, so two runs start from the same memory (no server's lock or socket)."""
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("serve.sock", "serve.lock", "models"))


def no_weights(tmp_path: Path) -> Path:
    """The model's directory without its weights: a command that loaded the model would fail."""
    path = tmp_path / "no-weights"
    path.mkdir()
    for part in model_dir().iterdir():
        if part.suffix != ".onnx":
            (path / part.name).symlink_to(part)
    return path


def every_command(data_dir: Path, out: Path, **env: str) -> dict[str, Run]:
    """Each store command once, in an order where none changes what a later one prints."""
    out.mkdir()
    runs = {
        "stats": hybrid_memory(data_dir, "stats", **env),
        "export": hybrid_memory(data_dir, "export", str(out / "export.jsonl"), "--quiet", **env),
        "export-all": hybrid_memory(
            data_dir, "export", str(out / "all.jsonl"), "--all-projects", "--with-embeddings", **env
        ),
        "graph": hybrid_memory(data_dir, "graph", "--html", str(out / "graph.html"), **env),
        "cleanup-dry": hybrid_memory(data_dir, "cleanup", "--dry-run", **env),
        "import-dry": hybrid_memory(data_dir, "import", str(out / "export.jsonl"), "--dry-run", **env),
        "import": hybrid_memory(data_dir, "import", str(out / "export.jsonl"), "--quiet", **env),
        "recall": hybrid_memory(data_dir, "recall", "who keeps the lighthouse?", "--limit", "3", **env),
        "recall-json": hybrid_memory(data_dir, "recall", "when does the ferry leave?", "--json", **env),
        "cleanup": hybrid_memory(data_dir, "cleanup", **env),
    }
    return runs


def export_body(path: Path) -> tuple[dict[str, object], list[str]]:
    """An export's header without its time, and its lines: what two exports of one memory share."""
    header, *lines = path.read_text().splitlines()
    fields = json.loads(header)
    fields.pop("exported_at")
    return fields, lines
