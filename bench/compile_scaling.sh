#!/usr/bin/env bash
# Compile time against document size (issues 15 and 42), for several shapes
# of document, each over 2 ranks:
#   bench/compile_scaling.sh exe  [N...]   rankc compile DOC -o OUT, both targets
#                                          (default N: 1000 10000 100000)
#   bench/compile_scaling.sh plan [N...]   rankc compile DOC --emit plan
#                                          (default N: 1000 ... 1000000)
# SHAPES (default "gen_dag halo wide step") picks the shapes: gen_dag
# (bench/gen_dag.py: a ring, messages every 50 nodes among a few live
# values), and bench/gen_shapes.py's halo (one long chain per rank, a halo
# message every 20 nodes), wide (many short chains, each ending in a
# message and an output) and step (a data-parallel training step, an
# allreduce per layer). TARGETS overrides the targets of `exe`.
# Prints one row per shape, N and target: seconds, microseconds per node,
# that per node over the same shape's and target's at 10^4 nodes (flat
# scaling: 1x; the issue's bound at 10^5: 1.3x), peak memory; then the
# --timing report's largest entries (the LLVM side of each program's build
# included), so that no time hides. A build that runs past TIMEOUT seconds
# (default 600) is a row of its own, "timeout".
set -euo pipefail
cd "$(dirname "$0")/.."
RANKC=${RANKC:-build/bin/rankc}
W=${RANKC_BENCH_DATA:-/tmp/rankc-compile-scaling}
mkdir -p "$W"
mode=${1:-plan}
shift || true
case $mode in
  exe) sizes=${*:-1000 10000 100000}; targets=${TARGETS:-cpu cuda} ;;
  plan) sizes=${*:-1000 10000 100000 1000000}; targets="plan" ;;
  *) echo "usage: compile_scaling.sh exe|plan [N...]" >&2; exit 2 ;;
esac
shapes=${SHAPES:-gen_dag halo wide step}
echo "| shape | N | target | seconds | us per node | per node vs 10^4 | peak MB |"
echo "|---|---|---|---|---|---|---|"
declare -A base=()
for shape in $shapes; do
  for n in $sizes; do
    doc="$W/$shape$n.json"
    case $shape in
      gen_dag) /usr/bin/python3 bench/gen_dag.py "$n" 2 "$doc" > /dev/null ;;
      *) /usr/bin/python3 bench/gen_shapes.py "$shape" "$n" 2 "$doc" > /dev/null ;;
    esac
    for t in $targets; do
      out="$W/$shape$n.$t"
      rm -rf "$out"
      case $t in
        plan) args=(--emit plan -o "$out") ;;
        cpu) args=(-o "$out") ;;
        cuda) args=(--target cuda -o "$out") ;;
      esac
      if ! /usr/bin/time -f "%e %M" -o "$W/time" timeout "${TIMEOUT:-600}" \
          "$RANKC" compile "$doc" "${args[@]}" --timing 2> "$W/timing-$shape-$t-$n.txt"; then
        echo "| $shape | $n | $t | timeout | | | |"
        continue
      fi
      read -r secs kb < "$W/time"
      per=$(echo "scale=1; $secs * 1000000 / $n" | bc)
      [ "$n" = 10000 ] && base[$shape-$t]=$per
      ratio=""
      [ -n "${base[$shape-$t]:-}" ] &&
        ratio="$(echo "scale=2; $per / ${base[$shape-$t]}" | bc)x"
      echo "| $shape | $n | $t | $secs | $per | $ratio | $((kb / 1024)) |"
    done
  done
done
echo
for shape in $shapes; do
  for n in $sizes; do
    for t in $targets; do
      f="$W/timing-$shape-$t-$n.txt"
      [ -f "$f" ] || continue
      echo "--timing, $shape, N=$n, $t (largest entries):"
      # (head closes the pipe early: not a failure.)
      { grep -E '^ +[0-9]' "$f" | grep -v Total | sort -k1 -g -r | head -8 |
          sed 's/^ */  /'; } || true
    done
  done
done
