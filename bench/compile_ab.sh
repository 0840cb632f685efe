#!/usr/bin/env bash
# Two rankc binaries, old and new, compiling the same bench/gen_dag.py
# document alternately (a machine's speed drifts over minutes: only pairs
# run side by side compare), pinned to the first K cores with taskset.
#   OLD=path/to/rankc NEW=path/to/rankc bench/compile_ab.sh [K...]
# (default K: 16 and 2, up to nproc). N nodes over 2 ranks (RANKC_AB_NODES,
# default 10^5), both targets where ptxas is found, REPS runs of each pair
# (default 2). On the GPU machine: the binaries of scripts/bundle-rankc.sh,
# with `. scripts/device-env.sh` and RANKC_MPICH_LIBRARY set first.
set -euo pipefail
cd "$(dirname "$0")/.."
OLD=${OLD:?set OLD to the old rankc} NEW=${NEW:?set NEW to the new rankc}
N=${RANKC_AB_NODES:-100000}
REPS=${REPS:-2}
W=${RANKC_BENCH_DATA:-/tmp/rankc-compile-ab}
PY=${PYTHON:-python3}
mkdir -p "$W"
"$PY" bench/gen_dag.py "$N" 2 "$W/d.json" > /dev/null
targets=cpu
{ command -v ptxas || [ -x /usr/local/cuda/bin/ptxas ]; } > /dev/null && targets="cpu cuda"
cores=$(nproc)
echo "rankc compile, $N nodes over 2 ranks, old and new alternating; seconds"
echo
echo "| target | cores | old | new |"
echo "|---|---|---|---|"
for t in $targets; do
  for k in ${*:-16 2}; do
    [ "$k" -le "$cores" ] || continue
    declare -A secs=([old]= [new]=)
    for _ in $(seq "$REPS"); do
      for v in old new; do
        bin=$OLD; [ $v = new ] && bin=$NEW
        rm -rf "$W/out"
        start=$(date +%s.%N)
        taskset -c "0-$((k - 1))" "$bin" compile "$W/d.json" --target "$t" -o "$W/out"
        s=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')
        secs[$v]="${secs[$v]:+${secs[$v]}, }$s"
      done
    done
    echo "| $t | $k | ${secs[old]} | ${secs[new]} |"
  done
done
