"""The official MCP conformance suite against the server over streamable HTTP.

``tools/conformance`` pins ``@modelcontextprotocol/conformance`` and the Node 22 it
needs (``npm ci --prefix tools/conformance``, which ``scripts/test.sh`` runs). The
scenarios that call the suite's own fixture tools, prompts and resources are listed,
with why, in ``tools/conformance/expected-failures.yml``; every other server scenario
must pass, and an expected failure that starts passing fails the run too.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.e2e.servers import free_port, http_server

pytestmark = [pytest.mark.conformance, pytest.mark.subprocess, pytest.mark.model]

SUITE_DIR = REPO / "tools" / "conformance"
NODE = SUITE_DIR / "node_modules" / ".bin" / "node"
CLI = SUITE_DIR / "node_modules" / "@modelcontextprotocol" / "conformance" / "dist" / "index.js"
BASELINE = SUITE_DIR / "expected-failures.yml"


def _node_major() -> int | None:
    if not NODE.is_file():
        return None
    out = subprocess.run([str(NODE), "--version"], capture_output=True, text=True, timeout=30, check=False)
    return int(out.stdout.strip().lstrip("v").split(".")[0]) if out.returncode == 0 else None


def _require_suite() -> None:
    major = _node_major()
    reason = None
    if major is None or major < 22:
        reason = f"Node >= 22 is not installed in tools/conformance (found {major})"
    elif not CLI.is_file():
        reason = "@modelcontextprotocol/conformance is not installed in tools/conformance"
    if reason is None:
        return
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"{reason}; CI must install it: npm ci --prefix tools/conformance", pytrace=False)
    pytest.skip(f"{reason}: npm ci --prefix tools/conformance")


def test_applicable_conformance_scenarios_pass(tmp_path: Path) -> None:
    _require_suite()
    results = tmp_path / "results"
    with http_server(tmp_path / "data", free_port()) as server:
        suite = [
            "server",
            "--url",
            server.url,
            "--expected-failures",
            str(BASELINE),
            "--output-dir",
            str(results),
        ]
        run = subprocess.run(
            [str(NODE), str(CLI), *suite],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    failed = sorted(
        f"{path.parent.name}: {check.get('errorMessage')}"
        for path in results.glob("*/checks.json")
        for check in json.loads(path.read_text())
        if check.get("status") == "FAILURE"
    )
    summary = run.stdout[run.stdout.find("=== SUMMARY ===") :]
    assert run.returncode == 0, f"{summary}\n{run.stderr[-2000:]}\nfailed checks:\n" + "\n".join(failed)
    # The run is not empty: the scenarios that apply really ran and passed.
    assert "server-initialize: 1 passed, 0 failed" in summary
    assert "logging-set-level: 1 passed, 0 failed" in summary
    assert "resources-list: 1 passed, 0 failed" in summary
    assert "prompts-list: 1 passed, 0 failed" in summary
