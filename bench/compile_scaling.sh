#!/usr/bin/env bash
# Compile time against document size (issue 15): bench/gen_dag.py documents
# of N nodes over 2 ranks (a ring: messages cut each program into parts).
#   bench/compile_scaling.sh exe  [N...]   rankc compile DOC -o OUT, both targets
#                                          (default N: 1000 10000 100000)
#   bench/compile_scaling.sh plan [N...]   rankc compile DOC --emit plan
#                                          (default N: 1000 ... 1000000)
# SHAPE=halo|wide (bench/gen_shapes.py: a long halo chain per rank, or many
# short chains each ending in a message) measures another shape of document
# (default: gen_dag.py's).
# Prints one row per N and target: seconds, microseconds per node, peak
# memory, then the --timing report's largest entries (time per phase; the
# LLVM side of each program's build included), so that no time hides.
set -euo pipefail
cd "$(dirname "$0")/.."
RANKC=${RANKC:-build/bin/rankc}
W=${RANKC_BENCH_DATA:-/tmp/rankc-compile-scaling}
mkdir -p "$W"
mode=${1:-plan}
shift || true
case $mode in
  exe) sizes=${*:-1000 10000 100000}; targets="cpu cuda" ;;
  plan) sizes=${*:-1000 10000 100000 1000000}; targets="plan" ;;
  *) echo "usage: compile_scaling.sh exe|plan [N...]" >&2; exit 2 ;;
esac
echo "| N | target | seconds | us per node | peak MB |"
echo "|---|---|---|---|---|"
for n in $sizes; do
  case ${SHAPE:-gen_dag} in
    gen_dag) /usr/bin/python3 bench/gen_dag.py "$n" 2 "$W/d$n.json" > /dev/null ;;
    *) /usr/bin/python3 bench/gen_shapes.py "$SHAPE" "$n" 2 "$W/d$n.json" > /dev/null ;;
  esac
  for t in $targets; do
    case $t in
      plan) args=(--emit plan -o "$W/d$n.plan") ;;
      cpu) args=(-o "$W/d$n.cpu") ;;
      cuda) args=(--target cuda -o "$W/d$n.cuda") ;;
    esac
    /usr/bin/time -f "%e %M" -o "$W/time" "$RANKC" compile "$W/d$n.json" "${args[@]}" \
      --timing 2> "$W/timing-$t-$n.txt"
    read -r secs kb < "$W/time"
    echo "| $n | $t | $secs | $(echo "scale=1; $secs * 1000000 / $n" | bc) | $((kb / 1024)) |"
  done
done
echo
for n in $sizes; do
  for t in $targets; do
    echo "--timing, N=$n, $t (largest entries):"
    grep -E '^ +[0-9]' "$W/timing-$t-$n.txt" | grep -v Total |
      sort -k1 -g -r | head -8 | sed 's/^ */  /'
  done
done
