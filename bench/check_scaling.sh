#!/usr/bin/env bash
# `rankc check` on generated MPMD DAGs of 1e4, 1e5 and 1e6 nodes over 8 to 64
# ranks: wall time (best of 3, parsing included) and time per node.
# usage: bench/check_scaling.sh [RANKC]   (default build/bin/rankc)
set -euo pipefail
cd "$(dirname "$0")/.."
RANKC=${1:-build/bin/rankc}
DATA=${RANKC_BENCH_DATA:-/tmp/rankc-bench}
mkdir -p "$DATA"
printf "| nodes | ranks | JSON MB | best wall s | read s | check s | verify s | us/node |\n"
printf "|---|---|---|---|---|---|---|---|\n"
for n in 10000 100000 1000000; do
  for r in 8 64; do
    f="$DATA/dag_${n}_${r}.json"
    [ -f "$f" ] || python3 bench/gen_dag.py "$n" "$r" "$f"
    best=""
    for i in 1 2 3; do
      start=$(date +%s.%N)
      "$RANKC" check "$f" --timing > /dev/null 2> "$DATA/timing.txt"
      end=$(date +%s.%N)
      t=$(echo "$end - $start" | bc)
      if [ -z "$best" ] || [ "$(echo "$t < $best" | bc)" = 1 ]; then
        best=$t; cp "$DATA/timing.txt" "$DATA/best.txt"
      fi
    done
    phase() { grep "$1" "$DATA/best.txt" | awk '{print $1}'; }
    mb=$(du -m "$f" | cut -f1)
    us=$(echo "scale=3; $best * 1000000 / $n" | bc)
    printf "| %s | %s | %s | %.3f | %s | %s | %s | %s |\n" "$n" "$r" "$mb" "$best" \
      "$(phase 'read JSON')" "$(phase 'check DAG')" "$(phase 'verify ranks')" "$us"
  done
done
