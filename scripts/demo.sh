#!/usr/bin/env bash
# The main job on a shipped example: installs what is missing, builds, then
# compiles examples/stencil.json (a 1-D heat equation with halo exchange on 4
# ranks) into per-rank executables and runs them under MPICH's mpiexec.
#   bash scripts/demo.sh [EXAMPLE.json]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
EXAMPLE=${1:-examples/stencil.json}
NAME=$(basename "$EXAMPLE" .json)
OUT=build/demo/$NAME
RANKC=./build/bin/rankc
$RANKC check "$EXAMPLE"
$RANKC compile "$EXAMPLE" -o "$OUT"
echo "--- compiled into $OUT: $(cd "$OUT" && echo *)"
echo "--- schedule ($OUT/plan.json):"
cat "$OUT/plan.json"
echo "--- running $OUT/launch (reproducible inputs):"
"$OUT/launch" --outputs "$OUT/results" --trace "$OUT/trace.json"
echo "--- outputs:"
(cd "$OUT/results" && ls rank*/*.npy)
echo "--- timeline of every rank: $OUT/trace.json (open in https://ui.perfetto.dev)"
