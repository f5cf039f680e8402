"""Two machines for ``hybrid-memory sync``: each a data dir and a clone of one repository, and a
bare git repository between them. Sessions are captured as a person's would be, by
``hybrid-memory import-transcript`` of a Claude Code transcript written in the clone."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
import uuid
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from mcp import StdioServerParameters

from tests.e2e.claude_code import hook_env

COMMAND = Path(sys.executable).parent / "hybrid-memory"
ORIGIN = "git@github.com:ada/ledger.git"
"""The repository's remote on both machines (never reached: only its name matters)."""


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True, timeout=60)
    return done.stdout


@dataclass(frozen=True)
class Killed:
    applied_before_kill: dict[str, int]
    """What the killed sync had recorded as applied."""


@dataclass(frozen=True)
class Machine:
    data_dir: Path
    clone: Path

    def run(
        self, *args: str, cwd: Path | None = None, check: bool = True
    ) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [str(COMMAND), *args],
            env=hook_env(self.data_dir),
            cwd=cwd or self.clone,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if check and done.returncode != 0:
            raise AssertionError(f"hybrid-memory {' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done

    def sync(self, remote: Path, cwd: Path | None = None) -> str:
        return self.run("sync", str(remote), cwd=cwd).stdout

    def kill_sync_once_applying(self, remote: Path) -> Killed:
        """Start ``sync`` and kill it (SIGKILL) once it has the other machine's change file to apply."""
        process = subprocess.Popen(
            [str(COMMAND), "sync", str(remote)],
            env=hook_env(self.data_dir),
            cwd=self.clone,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 120
        try:
            while not list((self.data_dir / "sync").glob("*/clone/changes/*/*.jsonl")):
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("the sync ended (or never pulled) before it could be killed")
                time.sleep(0.005)
        finally:
            process.kill()
            code = process.wait(timeout=60)
        assert code == -signal.SIGKILL
        state = next((self.data_dir / "sync").glob("*/state.sqlite"))
        with closing(sqlite3.connect(state)) as db:
            applied = dict(db.execute("SELECT machine, seq FROM applied").fetchall())
        return Killed(applied)

    def recall(self, query: str, cwd: Path | None = None) -> list[str]:
        hits = json.loads(self.run("recall", query, "--json", "--limit", "10", cwd=cwd).stdout)["results"]
        return [str(hit["text"]) for hit in hits]

    def capture(self, session: str, turns: list[tuple[str, str]]) -> None:
        """A Claude Code session in the clone, one line per (role, text), captured."""
        self.run("import-transcript", str(self.transcript(session, turns)))

    def end_session(self, session: str, turns: list[tuple[str, str]], **env: str) -> str:
        """The session's last hook, SessionEnd, as Claude Code runs it (capture not detached); its stderr."""
        payload = {"session_id": session, "transcript_path": str(self.transcript(session, turns))}
        payload |= {"cwd": str(self.clone), "hook_event_name": "SessionEnd", "reason": "exit"}
        done = subprocess.run(
            [str(COMMAND), "hook", "session-end"],
            input=json.dumps(payload),
            env=hook_env(self.data_dir, HYBRID_MEMORY_HOOK_DETACH="0", **env),
            cwd=self.clone,
            capture_output=True,
            text=True,
            timeout=300,
            check=True,
        )
        assert done.stdout == ""
        return done.stderr

    def transcript(self, session: str, turns: list[tuple[str, str]]) -> Path:
        """A Claude Code transcript of a session in the clone, one line per (role, text)."""
        path = self.data_dir.parent / f"{self.data_dir.name}-{session}.jsonl"
        lines = []
        for n, (role, text) in enumerate(turns):
            content: object = text if role == "user" else [{"type": "text", "text": text}]
            message: dict[str, object] = {"role": role, "content": content}
            if role == "assistant":
                message["id"] = f"msg_{session[:8]}_{n}"
            lines.append(
                {
                    "parentUuid": None,
                    "cwd": str(self.clone),
                    "sessionId": session,
                    "version": "1.0.80",
                    "type": role,
                    "message": message,
                    "uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}/{n}")),
                    "timestamp": f"2026-03-0{1 + n % 9}T09:00:0{n % 10}.000Z",
                }
            )
        path.write_text("".join(json.dumps(line) + "\n" for line in lines))
        return path

    def export(self) -> list[dict[str, object]]:
        path = self.data_dir.parent / f"{self.data_dir.name}-export.jsonl"
        self.run("export", "--all-projects", "--quiet", str(path))
        return [json.loads(line) for line in path.read_text().splitlines()[1:]]

    def counts(self) -> dict[str, int]:
        found = {"memory": 0, "note": 0, "link": 0}
        for item in self.export():
            found[str(item["item"])] += 1
        return found


def machine(root: Path, name: str) -> Machine:
    """A data dir and a clone of the repository (remote ``ORIGIN``) at a path of its own."""
    clone = root / name / "work" / f"ledger-{name}"
    clone.mkdir(parents=True)
    git(clone, "init", "--quiet", "--initial-branch=main")
    git(clone, "remote", "add", "origin", ORIGIN)
    return Machine(root / name / "data", clone)


def bare(root: Path) -> Path:
    path = root / "memory.git"
    path.mkdir()
    git(path, "init", "--quiet", "--bare", "--initial-branch=main")
    return path


def remote_text(repository: Path) -> str:
    """Every blob the bare repository holds, as text: what anyone with the repository can read."""
    objects = git(repository, "cat-file", "--batch-all-objects", "--batch-check")
    blobs = [line.split()[0] for line in objects.splitlines() if line.split()[1] == "blob"]
    return "\n".join(git(repository, "cat-file", "-p", blob) for blob in blobs)


def server(one: Machine) -> StdioServerParameters:
    """``hybrid-memory serve`` on the machine's data dir, for the clone's project (a session in it)."""
    env = hook_env(one.data_dir, HYBRID_MEMORY_PROJECT=os.path.realpath(one.clone))
    return StdioServerParameters(command=str(COMMAND), args=["serve"], env=env, cwd=str(one.clone))
