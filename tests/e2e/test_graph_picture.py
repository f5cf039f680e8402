"""``hybrid-memory graph --html FILE``, rendered in a real headless Chromium."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.models import MessageIn, NoteType, Relation, Scope
from hybrid_memory.server.app import open_app
from hybrid_memory.service import NoteDraft, ThreadDraft
from tests.conftest import make_settings
from tests.e2e.test_cli_cleanup import hybrid_memory

pytestmark = [pytest.mark.subprocess, pytest.mark.model, pytest.mark.browser]

SCOPE = Scope(project="test")
BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)


def chromium(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert BROWSER is not None
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    return subprocess.run([BROWSER, *flags, *args], capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.skipif(BROWSER is None, reason="no Chromium installed (Debian: apt-get install chromium)")
async def test_the_graph_page_renders_every_note_offline_in_chromium(
    tmp_path: Path, embedder: Embedder
) -> None:
    data = tmp_path / "data"
    async with open_app(make_settings(data), embedder) as app:
        service = app.service
        said = await service.remember_thread(
            SCOPE,
            ThreadDraft("t", [MessageIn(role="user", content="My sister Alice moved to Lisbon.", id="m1")]),
        )
        alice = await service.create_note(
            SCOPE, NoteDraft(content="Alice, the user's sister", type=NoteType.CONCEPT)
        )
        lives = await service.create_note(
            SCOPE,
            NoteDraft(
                content="Alice lives in Lisbon </script> <b>",
                type=NoteType.FACT,
                tags=[f"src:{said.memory_ids[0]}"],
            ),
        )
        tea = await service.create_note(
            SCOPE, NoteDraft(content="The user prefers green tea.", type=NoteType.PREFERENCE)
        )
        await service.create_link(SCOPE, from_id=lives.id, to_id=alice.id, relation=Relation.PART_OF)

    page = tmp_path / "graph.html"
    done = hybrid_memory("graph", data, "--html", str(page))
    assert done.returncode == 0, done.stderr
    text = page.read_text(encoding="utf-8")
    assert not re.search(r"(src|href)=\"?https?:", text)
    assert "My sister Alice moved to Lisbon." in text

    dom = chromium(tmp_path, "--dump-dom", page.as_uri())
    shot = chromium(
        tmp_path, f"--screenshot={tmp_path / 'graph.png'}", "--window-size=1280,800", page.as_uri()
    )

    assert 'data-rendered="3"' in dom.stdout, dom.stderr[-2000:]
    drawn = dict(re.findall(r'<circle class="node" data-id="([^"]+)" data-type="(\w+)"', dom.stdout))
    assert drawn == {alice.id: "concept", lives.id: "fact", tea.id: "preference"}
    assert dom.stdout.count('class="link" data-relation="part_of"') == 1
    assert shot.returncode == 0, shot.stderr[-2000:]
    assert (tmp_path / "graph.png").stat().st_size > 1000
