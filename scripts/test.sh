#!/usr/bin/env bash
# Set up everything the tests need on a fresh machine, then run lint, types and the suite.
# Usage: bash scripts/test.sh [pytest args...]
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
.venv/bin/python -m pip install --quiet -e ".[test]"

# Neo4j's own Cypher linter (pinned pre-release) for the offline Cypher lint test.
if [ -f tools/cypher-lint/package-lock.json ]; then
  npm ci --silent --no-audit --no-fund --prefix tools/cypher-lint
fi

# Headless Chromium for the graph page and viewer tests (skipped without one): Debian's package, only as
# root, driven by the playwright Python package of the test extras (never `playwright install`).
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  apt-get install -y -qq chromium >/dev/null || echo "chromium not installed: the browser test will skip" >&2
fi

# The official MCP conformance suite and the Node 22 it runs on (pinned), for tests/e2e/test_conformance.py.
if [ -f tools/conformance/package-lock.json ]; then
  npm ci --silent --no-audit --no-fund --prefix tools/conformance
fi

# The real Claude Code CLI (pinned) for tests/e2e/test_claude_code.py, run offline against a loopback
# stand-in of the Messages API; the tests skip without it.
if [ -f tools/claude-code/package-lock.json ]; then
  npm ci --silent --no-audit --no-fund --prefix tools/claude-code
fi
# The real Codex CLI (pinned) for tests/e2e/test_codex_cli.py, run offline the same way.
if [ -f tools/codex-cli/package-lock.json ]; then
  npm ci --silent --no-audit --no-fund --prefix tools/codex-cli
fi

# The real Gemini CLI and opencode (pinned) for tests/e2e/test_agent_install.py and test_agent_sessions.py,
# run offline against loopback stand-ins of their model APIs.
if [ -f tools/gemini-cli/package-lock.json ]; then
  npm ci --silent --no-audit --no-fund --prefix tools/gemini-cli
fi
# opencode's lock names only the Linux builds this registry serves, so `npm ci` (which wants every platform's
# entry) refuses it; `npm install` takes the pinned version from the lock and leaves the lock as it is.
if [ -f tools/opencode/package-lock.json ]; then
  npm install --silent --no-audit --no-fund --prefix tools/opencode
fi

# The suite runs on the packaged int8 model unless HYBRID_MEMORY_EMBEDDING_MODEL_PATH names
# another; the fp32 tests in tests/embeddings find ../shared/models/all-MiniLM-L6-v2-onnx
# by themselves (HYBRID_MEMORY_TEST_FP32_MODEL_PATH elsewhere) and skip without it.

.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
.venv/bin/pytest "$@"
