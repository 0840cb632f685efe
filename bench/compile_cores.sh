#!/usr/bin/env bash
# Compile wall time against cores (issue 15: "wall time that drops with
# cores"): the same `rankc compile` of bench/gen_dag.py documents, pinned to
# the first K cores with taskset (rankc sizes its threads from the cores it
# may run on).
#   bench/compile_cores.sh [K...]     (default: 1 2 4 8 16, up to nproc)
# Documents: 10^5 nodes over 2 ranks (the issue's; 2 programs of 50,000
# nodes) and over 16 ranks (16 programs of 6,250). Targets: cpu, and cuda
# where ptxas is on PATH. RANKC (default build/bin/rankc) is the compiler:
# on the GPU machine, the one scripts/bundle-rankc.sh packs.
set -euo pipefail
cd "$(dirname "$0")/.."
RANKC=${RANKC:-build/bin/rankc}
W=${RANKC_BENCH_DATA:-/tmp/rankc-compile-cores}
N=${RANKC_CORES_NODES:-100000}
PY=${PYTHON:-python3}
mkdir -p "$W"
cores=$(nproc)
ks=${*:-1 2 4 8 16}
targets=cpu
command -v ptxas > /dev/null && targets="cpu cuda"
echo "rankc compile, $N nodes, $cores cores here; seconds (speed-up over 1 core)"
echo
echo "| ranks | target | $(for k in $ks; do [ "$k" -le "$cores" ] && printf '%s cores | ' "$k"; done)"
echo "|---|---|$(for k in $ks; do [ "$k" -le "$cores" ] && printf -- '---|'; done)"
for ranks in 2 16; do
  "$PY" bench/gen_dag.py "$N" "$ranks" "$W/d$ranks.json"
  for t in $targets; do
    row="| $ranks | $t |"
    base=
    for k in $ks; do
      [ "$k" -le "$cores" ] || continue
      args=(-o "$W/out")
      [ "$t" = cuda ] && args+=(--target cuda)
      # (date and awk: the GPU machine has neither /usr/bin/time nor bc)
      start=$(date +%s.%N)
      taskset -c "0-$((k - 1))" "$RANKC" compile "$W/d$ranks.json" \
        "${args[@]}" --timing 2> "$W/timing-$ranks-$t-$k.txt"
      secs=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
      base=${base:-$secs}
      row="$row $secs ($(awk -v a="$base" -v b="$secs" 'BEGIN { printf "%.2f", a / b }')x) |"
    done
    echo "$row"
  done
done
