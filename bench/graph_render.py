"""How long the graph page takes to lay out and draw in headless Chromium, by graph size.

    nice python bench/graph_render.py [--notes 200 2000] [--runs 5] [--out bench/results/graph_render.json]

Each graph is clustered like a real one (cluster sizes from a Pareto draw, 2 to 60 notes,
a hub and a ring in each, one bridge between clusters per 20 notes), written by
``graph_page.render`` and opened from a file in Debian's Chromium (headless, through
Playwright), a new page per run. Reported per size, median over the runs: ``script_ms``,
from the page script's start to the end of the first draw, as the page records it, and
``layout_ms`` of it (the force layout alone); ``load_ms``, from navigation start to that same
moment (HTML parse included); and the same checks the tests make (nodes outside the view,
overlapping labels). The smallest size is the baseline the others are compared with, in the
same run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
from pathlib import Path
from tempfile import TemporaryDirectory
from typing import Any

import anyio
from playwright.async_api import async_playwright

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.e2e.browser import BROWSER, FLAGS, GRAPH_FACTS, WINDOW  # noqa: E402
from tests.e2e.graphs import clustered_graph, sizes_summing_to  # noqa: E402

from hybrid_memory.viewer import graph_page  # noqa: E402


async def measure(path: Path, runs: int) -> dict[str, Any]:
    assert BROWSER is not None, "no Chromium installed (Debian: apt-get install chromium)"
    script, load, layout = [], [], []
    facts: dict[str, Any] = {}
    async with async_playwright() as driver:
        browser = await driver.chromium.launch(executable_path=shutil.which(BROWSER), args=FLAGS)
        for _ in range(runs):
            page = await browser.new_page(viewport=WINDOW)
            await page.goto(path.as_uri())
            await page.wait_for_selector("body[data-rendered]", timeout=120_000)
            script.append(float(await page.evaluate("Number(document.body.dataset.renderMs)")))
            load.append(float(await page.evaluate("Number(document.body.dataset.renderedAt)")))
            layout.append(float(await page.evaluate("Number(document.body.dataset.layoutMs)")))
            facts = await page.evaluate(GRAPH_FACTS)
            await page.close()
        await browser.close()
    return {
        "script_ms": statistics.median(script),
        "load_ms": statistics.median(load),
        "layout_ms": statistics.median(layout),
        "script_ms_runs": script,
        "nodes_outside": len(facts["outside"]),
        "overlapping_labels": len(facts["overlaps"]),
        "labels_shown": facts["labels"],
    }


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, nargs="+", default=[200, 2000])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "bench/results/graph_render.json")
    args = parser.parse_args()
    report: dict[str, Any] = {"load_average_before": os.getloadavg(), "sizes": {}}
    with TemporaryDirectory() as tmp:
        for total in sorted(args.notes):
            notes, links = clustered_graph(sizes_summing_to(total), bridges=total // 20)
            path = Path(tmp) / f"graph-{total}.html"
            path.write_text(
                graph_page.render(f"{total} notes", graph_page.page_data(notes, links, {})), "utf-8"
            )
            row = await measure(path, args.runs)
            row["links"] = len(links)
            report["sizes"][str(total)] = row
            print(
                f"{total:>5} notes {len(links):>5} links: script {row['script_ms']:.0f} ms "
                f"(layout {row['layout_ms']:.0f} ms), "
                f"load {row['load_ms']:.0f} ms (median of {args.runs}); "
                f"{row['nodes_outside']} nodes outside, {row['overlapping_labels']} overlapping labels",
                flush=True,
            )
    base = report["sizes"][str(min(args.notes))]["script_ms"]
    for row in report["sizes"].values():
        row["script_vs_smallest"] = round(row["script_ms"] / base, 2)
    report["load_average_after"] = os.getloadavg()
    print(f"load average before {report['load_average_before']}, after {report['load_average_after']}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    anyio.run(main)
