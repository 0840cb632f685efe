#!/usr/bin/env bash
# Compile time of the CUDA backend against program size: bench/gen_dag.py
# documents of N nodes over RANKS ranks (messages cut the programs into
# parts, so there are thousands of kernels), `rankc compile --target cuda
# --emit ptx` (every program through rankc-lower-cuda; LLVM NVPTX, no
# ptxas). Prints N, kernels and seconds.
# usage: bench/gpu/compile_scaling.sh [N...]   (RANKS, default 2)
set -euo pipefail
cd "$(dirname "$0")/../.."
W=${RANKC_BENCH_DATA:-/tmp/rankc-cuda-scaling}
mkdir -p "$W"
for n in ${@:-2500 5000 10000 20000}; do
  python3 bench/gen_dag.py "$n" "${RANKS:-2}" "$W/d.json" > /dev/null
  start=$(date +%s.%N)
  build/bin/rankc compile "$W/d.json" --target cuda --emit ptx -o "$W/d.ptx"
  end=$(date +%s.%N)
  echo "N=$n kernels=$(grep -c '\.entry' "$W/d.ptx") seconds=$(echo "$end - $start" | bc)"
done
