"""The page's parts, read from the package: d3-force (vendored, pinned) and our own script and style.

``vendor/`` holds d3-force and the three small d3 modules it needs, as their authors
publish them on npm, with their ISC licence and ``vendor.json`` (versions, npm
integrity); ``tools/graph-layout/vendor.sh`` refreshes them from the pinned lock file.
d3-force was chosen because it is a layout library only (17 kB, no renderer): the page
draws SVG itself, so label placement, screen-size nodes and the zoom stay ours to measure.
"""

from __future__ import annotations

import base64
import hashlib
import json
from functools import cache
from importlib import resources

VENDOR_ORDER = ("d3-dispatch", "d3-quadtree", "d3-timer", "d3-force")
"""Inlined in this order: each UMD bundle finds the ones before it on ``globalThis.d3``."""


def _read(folder: str, name: str) -> str:
    return resources.files("hybrid_memory.viewer").joinpath(folder, name).read_text(encoding="utf-8")


@cache
def vendored() -> dict[str, dict[str, str]]:
    """What ``vendor/vendor.json`` records for each vendored package: version, integrity, licence, file."""
    found: dict[str, dict[str, str]] = json.loads(_read("vendor", "vendor.json"))
    return found


@cache
def layout_script() -> str:
    """d3-force and its dependencies, then the graph component (``HMGraph``)."""
    parts = [_read("vendor", vendored()[name]["file"]) for name in VENDOR_ORDER]
    return "\n".join([*parts, _read("assets", "graph.js")])


@cache
def page_script() -> str:
    return layout_script() + "\n" + _read("assets", "page.js")


@cache
def graph_style() -> str:
    return _read("assets", "graph.css")


def csp_hash(source: str) -> str:
    """The CSP source expression that allows exactly this inline script or style."""
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode()).digest()).decode() + "'"


def licence_text() -> str:
    return _read("vendor", "LICENSE-d3")
