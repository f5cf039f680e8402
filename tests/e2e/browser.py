"""Headless Chromium (Debian's, never a downloaded one) driven by Playwright; what tests read from a page."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

BROWSER = next((b for b in ("chromium", "chromium-browser", "google-chrome") if shutil.which(b)), None)
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
WINDOW = {"width": 1280, "height": 800}

needs_chromium = pytest.mark.skipif(
    BROWSER is None, reason="no Chromium installed (Debian: apt-get install chromium)"
)


@asynccontextmanager
async def chromium_page(expected: tuple[str, ...] = ()) -> AsyncIterator[Any]:
    """A fresh page in a headless Chromium, closed on exit; page errors fail the test.

    So do errors on its console, but for those containing one of the ``expected`` strings.
    """
    playwright = pytest.importorskip("playwright.async_api")
    assert BROWSER is not None
    errors: list[str] = []
    async with playwright.async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=shutil.which(BROWSER), args=FLAGS)
        try:
            page = await browser.new_page(viewport=WINDOW)
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.on(
                "console",
                lambda msg: (
                    errors.append(msg.text)
                    if msg.type == "error" and not any(e in msg.text for e in expected)
                    else None
                ),
            )
            page.set_default_timeout(60_000)
            yield page
        finally:
            await browser.close()
    assert not errors, errors


GRAPH_FACTS = """() => {
  const view = document.getElementById('canvas').getBoundingClientRect();
  const nodes = [...document.querySelectorAll('circle.node')].map(c => {
    const b = c.getBoundingClientRect();
    return {id: c.dataset.id, cluster: c.dataset.cluster,
      x: (b.left + b.right) / 2, y: (b.top + b.bottom) / 2, r: b.width / 2,
      left: b.left, top: b.top, right: b.right, bottom: b.bottom};
  });
  const outside = nodes.filter(n => n.left < view.left || n.top < view.top || n.right > view.right ||
    n.bottom > view.bottom).map(n => n.id);
  const labels = [...document.querySelectorAll('text.label, text.caption')]
    .filter(t => getComputedStyle(t).display !== 'none').map(t => [t.textContent, t.getBoundingClientRect()]);
  const overlaps = [];
  for (let i = 0; i < labels.length; i++) for (let j = i + 1; j < labels.length; j++) {
    const [ta, a] = labels[i], [tb, b] = labels[j];
    if (a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom) overlaps.push([ta, tb]);
  }
  const labelsOutside = labels.filter(([, b]) => b.left < view.left || b.right > view.right ||
    b.top < view.top || b.bottom > view.bottom).map(([t]) => t);
  return {nodes, outside, overlaps, labelsOutside, labels: labels.length};
}"""
"""Measured from the drawn page: node discs outside the canvas, visible labels that overlap."""


def cluster_gaps(nodes: list[dict[str, Any]]) -> dict[tuple[str, str], float]:
    """For each pair of clusters, the gap in pixels between their bounding circles (< 0: they overlap).

    A cluster's circle is centred on its nodes' mean and reaches its farthest node's edge.
    """
    members: dict[str, list[dict[str, Any]]] = {}
    for n in nodes:
        if n["cluster"]:
            members.setdefault(n["cluster"], []).append(n)
    circles = {}
    for key, ms in members.items():
        cx = sum(n["x"] for n in ms) / len(ms)
        cy = sum(n["y"] for n in ms) / len(ms)
        circles[key] = (cx, cy, max(((n["x"] - cx) ** 2 + (n["y"] - cy) ** 2) ** 0.5 + n["r"] for n in ms))
    keys = sorted(circles)
    return {
        (a, b): ((circles[a][0] - circles[b][0]) ** 2 + (circles[a][1] - circles[b][1]) ** 2) ** 0.5
        - circles[a][2]
        - circles[b][2]
        for i, a in enumerate(keys)
        for b in keys[i + 1 :]
    }
