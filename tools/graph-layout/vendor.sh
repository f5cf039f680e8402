#!/usr/bin/env bash
# Refresh the d3-force files the graph page inlines from the versions pinned in package-lock.json.
# Usage: bash tools/graph-layout/vendor.sh   (then run tests/unit/test_vendored_layout.py)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="$here/../../src/hybrid_memory/viewer/vendor"
npm ci --silent --no-audit --no-fund --prefix "$here"
for package in d3-dispatch d3-quadtree d3-timer d3-force; do
  cp "$here/node_modules/$package/dist/$package.min.js" "$dest/"
done
cp "$here/node_modules/d3-force/LICENSE" "$dest/LICENSE-d3"
node -e '
const lock = require(process.argv[1]);
const out = {};
for (const name of ["d3-dispatch", "d3-quadtree", "d3-timer", "d3-force"]) {
  const entry = lock.packages["node_modules/" + name];
  out[name] = {version: entry.version, integrity: entry.integrity, license: entry.license, file: name + ".min.js"};
}
process.stdout.write(JSON.stringify(out, null, 2) + "\n");
' "$here/package-lock.json" > "$dest/vendor.json"
