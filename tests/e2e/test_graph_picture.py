"""``hybrid-memory graph --html``, rendered and measured in a real headless Chromium."""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any

import pytest

from hybrid_memory.embeddings.base import Embedder
from hybrid_memory.models import MessageIn, NoteType, Relation, Scope
from hybrid_memory.server.app import open_app
from hybrid_memory.service import NoteDraft, ThreadDraft
from hybrid_memory.viewer import graph_page
from tests.conftest import make_settings
from tests.e2e.browser import GRAPH_FACTS, chromium_page, cluster_gaps, needs_chromium
from tests.e2e.graphs import clustered_graph
from tests.e2e.test_cli_cleanup import hybrid_memory

pytestmark = [pytest.mark.browser, needs_chromium]

SCOPE = Scope(project="test")
CLUSTERS = {
    "family": [
        ("Alice is the user's sister", NoteType.CONCEPT),
        ("Alice lives in Lisbon </script> <b>", NoteType.FACT),
        ("Alice visits every August", NoteType.FACT),
        ("The user calls Alice on Sundays", NoteType.PREFERENCE),
    ],
    "tea": [
        ("The user prefers green tea", NoteType.PREFERENCE),
        ("Sencha is brewed at 70 degrees", NoteType.FACT),
        ("No coffee after noon", NoteType.DECISION),
    ],
    "deploys": [
        ("Deploys happen on Tuesdays", NoteType.DECISION),
        ("Why do Friday deploys fail?", NoteType.QUESTION),
        ("Staging mirrors production data nightly", NoteType.INSIGHT),
    ],
}


async def open_graph(page: Any, path: Path) -> dict[str, Any]:
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    await page.goto(path.as_uri())
    await page.wait_for_selector("body[data-rendered]")
    facts: dict[str, Any] = await page.evaluate(GRAPH_FACTS)
    facts["requests"] = requests
    return facts


def assert_offline_and_readable(facts: dict[str, Any], page_file: Path, notes: int) -> None:
    """Only the file was loaded; every note drawn inside the view; no label outside it or over another."""
    assert facts["requests"] == [page_file.as_uri()]
    assert len(facts["nodes"]) == notes
    assert facts["outside"] == []
    assert facts["labelsOutside"] == []
    assert facts["overlaps"] == []


@pytest.mark.subprocess
@pytest.mark.model
async def test_ten_notes_in_three_clusters_are_drawn_apart_with_every_label_readable(
    tmp_path: Path, embedder: Embedder
) -> None:
    data = tmp_path / "data"
    groups: dict[str, list[str]] = {}
    async with open_app(make_settings(data), embedder) as app:
        service = app.service
        said = await service.remember_thread(
            SCOPE,
            ThreadDraft("t", [MessageIn(role="user", content="My sister Alice moved to Lisbon.", id="m1")]),
        )
        for name, drafts in CLUSTERS.items():
            ids = []
            for content, kind in drafts:
                tags = [f"src:{said.memory_ids[0]}"] if "Lisbon" in content else []
                ids.append(
                    (await service.create_note(SCOPE, NoteDraft(content=content, type=kind, tags=tags))).id
                )
            for a, b in itertools.combinations(ids, 2):
                await service.create_link(SCOPE, from_id=a, to_id=b, relation=Relation.RELATES_TO)
            groups[name] = ids

    page_file = tmp_path / "graph.html"
    done = hybrid_memory("graph", data, "--html", str(page_file))
    assert done.returncode == 0, done.stderr
    text = page_file.read_text(encoding="utf-8")
    assert not re.search(r"(src|href)=\"?https?:", text)
    assert "Content-Security-Policy" in text

    async with chromium_page() as page:
        facts = await open_graph(page, page_file)
        await page.screenshot(path=str(tmp_path / "graph-10.png"))

        assert_offline_and_readable(facts, page_file, 10)
        assert facts["labels"] == 10 + 3, "every note's label and every cluster's caption shows"
        drawn = {}
        for n in facts["nodes"]:
            drawn.setdefault(n["cluster"], set()).add(n["id"])
        assert sorted(map(sorted, drawn.values())) == sorted(map(sorted, groups.values()))
        gaps = cluster_gaps(facts["nodes"])
        assert len(gaps) == 3
        assert min(gaps.values()) > 20, gaps

        lisbon = groups["family"][1]
        await page.click(f'circle.node[data-id="{lisbon}"]')
        detail = await page.inner_text("#detail")
        assert "Alice lives in Lisbon </script> <b>" in detail
        assert "My sister Alice moved to Lisbon." in detail  # its source
        assert "Links (3)" in detail
        assert "Alice visits every August" in detail  # a linked note

        await page.fill("#search", "tea")
        hits = await page.eval_on_selector_all("circle.node.hit", "cs => cs.map(c => c.dataset.id)")
        assert hits == [groups["tea"][0]]
        assert await page.locator("circle.node.dim").count() == 9
        assert (await page.evaluate(GRAPH_FACTS))["overlaps"] == []

        await page.mouse.move(900, 400)
        await page.mouse.wheel(0, -600)  # zoom in around the pointer
        zoomed = await page.evaluate(GRAPH_FACTS)
        assert zoomed["overlaps"] == []
        assert zoomed["nodes"][0]["x"] != facts["nodes"][0]["x"]
    assert (tmp_path / "graph-10.png").stat().st_size > 10_000


async def test_two_hundred_notes_fit_the_view_with_no_label_overlapping(tmp_path: Path) -> None:
    notes, links = clustered_graph([20] * 10)
    page_file = tmp_path / "graph-200.html"
    page_file.write_text(
        graph_page.render("200 notes", graph_page.page_data(notes, links, {})), encoding="utf-8"
    )

    async with chromium_page() as page:
        facts = await open_graph(page, page_file)
        await page.screenshot(path=str(tmp_path / "graph-200.png"))

    assert_offline_and_readable(facts, page_file, 200)
    assert facts["labels"] >= 30, "a readable share of the labels shows at the first zoom"
    gaps = cluster_gaps(facts["nodes"])
    assert len(gaps) == 45  # ten clusters, each pair apart
    assert min(gaps.values()) > 5, gaps
