"""The vendored d3-force: pinned, recorded, licensed, and inlined in a page that allows nothing else."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hybrid_memory.viewer import graph_page
from hybrid_memory.viewer.graph_parts import VENDOR_ORDER, csp_hash, licence_text, page_script, vendored
from hybrid_memory.viewer.page import PAGE, POLICY

LOCK = Path(__file__).resolve().parents[2] / "tools/graph-layout/package-lock.json"


def test_each_vendored_file_is_the_version_the_lock_file_pins() -> None:
    pinned = json.loads(LOCK.read_text())["packages"]
    recorded = vendored()
    assert sorted(recorded) == sorted(VENDOR_ORDER)
    for name, entry in recorded.items():
        assert pinned[f"node_modules/{name}"]["version"] == entry["version"]
        assert pinned[f"node_modules/{name}"]["integrity"] == entry["integrity"]
        assert entry["license"] == "ISC"
        assert f"/{name}/ v{entry['version']} " in page_script()  # the bundle's own header line


def test_the_licence_travels_in_every_page() -> None:
    assert "Permission to use, copy, modify, and/or distribute this software" in licence_text()
    page = graph_page.render("empty", graph_page.page_data([], [], {}))
    assert licence_text() in page
    assert licence_text() in PAGE


def test_the_graph_page_allows_only_its_own_script_and_loads_nothing() -> None:
    page = graph_page.render("empty", graph_page.page_data([], [], {}))
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy is not None
    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.S)
    assert len(scripts) == 1
    assert f"script-src {csp_hash(scripts[0])};" in policy.group(1)
    assert "default-src 'none'" in policy.group(1)
    assert not re.search(r"\b(src|href)=", page)


def test_the_viewer_policy_lets_it_talk_to_its_own_server_only() -> None:
    scripts = re.findall(r"<script>(.*?)</script>", PAGE, flags=re.S)
    assert len(scripts) == 1
    assert f"script-src {csp_hash(scripts[0])};" in POLICY
    assert "connect-src 'self'" in POLICY
    assert "default-src 'none'" in POLICY
    assert not re.search(r"\b(src|href)=", PAGE)
