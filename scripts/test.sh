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

# The official MCP conformance suite and the Node 22 it runs on (pinned), for tests/e2e/test_conformance.py.
if [ -f tools/conformance/package-lock.json ]; then
  npm ci --silent --no-audit --no-fund --prefix tools/conformance
fi

# The offline embedding model: shared/ beside the checkout unless configured.
if [ -z "${HYBRID_MEMORY_EMBEDDING_MODEL_PATH:-}" ] && [ -d ../shared/models/all-MiniLM-L6-v2-onnx ]; then
  export HYBRID_MEMORY_EMBEDDING_MODEL_PATH
  HYBRID_MEMORY_EMBEDDING_MODEL_PATH="$(cd ../shared/models/all-MiniLM-L6-v2-onnx && pwd)"
fi

.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
.venv/bin/pytest "$@"
