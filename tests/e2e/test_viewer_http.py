"""The memory viewer of ``serve --transport http``, in headless Chromium over real HTTP with a token."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest

from hybrid_memory.embeddings.base import Embedder
from tests.e2e.browser import chromium_page, needs_chromium
from tests.e2e.servers import http_server
from tests.e2e.viewer_data import seed

pytestmark = [pytest.mark.subprocess, pytest.mark.model, pytest.mark.browser, needs_chromium]

TOKEN = "viewer-test-token-0123456789"


async def walk_the_viewer(page: Any, base: str, ids: dict[str, str]) -> None:
    """Load, open a thread, recall, follow a hit to its thread, look at the notes and the recent captures."""
    await page.wait_for_selector("body[data-ready]")
    assert await page.input_value("#project") == "e2e"
    threads = await page.eval_on_selector_all("#thread-list a", "as => as.map(a => a.dataset.thread)")
    assert sorted(threads) == ["tea", "trip"]

    await page.click('#thread-list a[data-thread="trip"]')
    await page.wait_for_selector("#thread-view .msg")
    messages = await page.eval_on_selector_all("#thread-view .msg", "ms => ms.map(m => m.textContent)")
    assert len(messages) == 2
    assert "We fly to Lisbon on May 3rd to see my sister Alice." in messages[0]
    assert messages[0].startswith("user")

    await page.fill("#q", "when is the Lisbon trip")
    await page.press("#q", "Enter")
    await page.wait_for_selector("#results .item")
    first = await page.inner_text("#results .item")
    assert "Lisbon" in first
    for field in ("channels", "ranks", "relevance", "match", "recency"):
        assert field in first, first  # recall_memory's explain fields, shown
    await page.click("#results .item a")  # the hit's thread, opened at the hit
    await page.wait_for_selector("#thread-view .msg.hit")
    assert await page.get_attribute("#thread-view .msg.hit", "data-id") in (ids["asked"], ids["answered"])

    await page.click('nav button[data-tab="notes"]')
    await page.wait_for_selector("#graph circle.node")
    assert await page.locator("#graph circle.node").count() == 2
    await page.click(f'#graph circle.node[data-id="{ids["lives"]}"]')
    detail = await page.inner_text("#note-detail")
    assert "Alice lives in Lisbon" in detail
    assert "We fly to Lisbon on May 3rd" in detail  # the note's source message
    assert "Alice is the user's sister" in detail  # its link

    await page.click('nav button[data-tab="recent"]')
    await page.wait_for_selector("#recent-list .item")
    recent = await page.eval_on_selector_all("#recent-list .item", "items => items.length")
    assert recent == 5  # three messages and two notes, newest first
    assert "Alice lives in Lisbon" in await page.inner_text("#recent-list .item")
    assert await page.inner_text("#status") == ""


async def test_the_viewer_shows_the_memory_over_http_with_the_token_and_nothing_leaves_the_machine(
    tmp_path: Path, embedder: Embedder
) -> None:
    data = tmp_path / "data"
    ids = await seed(data, embedder)
    with http_server(data, env={"HYBRID_MEMORY_HTTP_TOKEN": TOKEN}) as server:
        base = f"http://127.0.0.1:{server.port}"
        async with chromium_page() as page:
            requests: list[str] = []
            page.on("request", lambda r: requests.append(r.url))
            await page.goto(f"{base}/viewer#token={TOKEN}")
            await walk_the_viewer(page, base, ids)
            assert page.url == f"{base}/viewer"  # the token left the address bar
            await page.screenshot(path=str(tmp_path / "viewer.png"))

        assert requests, "the page made requests"
        assert [u for u in requests if not u.startswith(f"{base}/viewer")] == []
        assert all(TOKEN not in u for u in requests)


async def test_without_the_token_the_viewer_gets_401_and_asks_for_it(
    tmp_path: Path, embedder: Embedder
) -> None:
    data = tmp_path / "data"
    await seed(data, embedder)
    with http_server(data, env={"HYBRID_MEMORY_HTTP_TOKEN": TOKEN}) as server:
        base = f"http://127.0.0.1:{server.port}"
        async with httpx.AsyncClient(base_url=base, timeout=30) as http:
            assert (await http.get("/viewer/api/threads")).status_code == 401
            wrong = await http.get("/viewer/api/threads", headers={"Authorization": "Bearer not-the-token"})
            assert wrong.status_code == 401
            assert (await http.get("/viewer/api/recall", params={"q": "Lisbon"})).status_code == 401
            page = await http.get("/viewer")
            assert page.status_code == 200  # the static page: no memory in it
            assert "Lisbon" not in page.text
            assert "script-src 'sha256-" in page.headers["content-security-policy"]
            assert "connect-src 'self'" in page.headers["content-security-policy"]
            auth = {"Authorization": f"Bearer {TOKEN}"}
            assert (await http.get("/viewer/api/threads", headers=auth)).status_code == 200
            assert (await http.post("/viewer/api/threads", headers=auth)).status_code == 405
            assert (
                await http.get("/viewer/api/threads", headers={**auth, "Host": "evil.test"})
            ).status_code == 421
            origin = {**auth, "Origin": "http://evil.test"}
            assert (await http.get("/viewer/api/threads", headers=origin)).status_code == 403
            missing = await http.get("/viewer/api/thread", headers=auth, params={"id": "nope"})
            assert missing.status_code == 404
            assert missing.json() == {
                "error": "No thread 'nope' in this project. list_threads returns thread ids."
            }

        async with chromium_page(expected=("401",)) as page:
            statuses: dict[str, int] = {}
            page.on("response", lambda r: statuses.__setitem__(r.url.split("?")[0], r.status))
            await page.goto(f"{base}/viewer")
            await page.wait_for_selector("#auth:not([hidden])")
            assert statuses[f"{base}/viewer/api/projects"] == 401
            assert await page.locator("#thread-list a").count() == 0
            await page.fill("#token", TOKEN)
            await page.click("#use-token")
            await page.wait_for_selector("body[data-ready]")
            assert await page.locator("#thread-list a").count() == 2
