#!/usr/bin/env bash
# The main job on a shipped example: installs what is missing, builds,
# verifies examples/ring.json and prints its MLIR.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
EXAMPLE=${1:-examples/ring.json}
./build/tools/rankc/rankc check "$EXAMPLE"
./build/tools/rankc/rankc compile "$EXAMPLE" --emit mlir -o build/example.mlir
echo "--- MLIR of $EXAMPLE (also in build/example.mlir), locations omitted:"
./build/tools/rankc-opt/rankc-opt build/example.mlir
