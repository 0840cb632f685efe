#!/usr/bin/env bash
# Overlap of communication with computation: each DAG compiled with rankc's
# schedule (--schedule overlap, the default) and with the bulk-synchronous
# baseline (--schedule bulk-synchronous: a send waits for all the work of its
# level and completes before the program goes on), run under mpiexec with
# --stats. "blocked" is the mean time per rank spent waiting in MPI, i.e.
# communication left exposed; hidden = 1 - blocked(overlap)/blocked(bsp).
# usage: bench/overlap.sh [RANKC]
set -euo pipefail
cd "$(dirname "$0")/.."
RANKC=${1:-build/bin/rankc}
W=${RANKC_BENCH_DATA:-/tmp/rankc-overlap}
mkdir -p "$W"
run() { # name, dag
  local name=$1 dag=$2
  for sched in overlap bulk-synchronous; do
    "$RANKC" compile "$dag" -o "$W/$name-$sched" --schedule "$sched"
    best=""
    for i in 1 2 3; do
      "$W/$name-$sched/launch" --outputs "$W/res" --stats "$W/stats.json" > /dev/null
      line=$(python3 -c "
import json; s=json.load(open('$W/stats.json'))['ranks']
n=len(s); print(max(r['wall'] for r in s), sum(r['compute'] for r in s)/n, sum(r['blocked'] for r in s)/n)")
      set -- $line
      if [ -z "$best" ] || [ "$(echo "$1 < $best" | bc)" = 1 ]; then best=$1; bestline=$line; fi
    done
    echo "$name $sched $bestline"
  done
}
python3 bench/gen_overlap.py stencil 2 4 2097152 4 0 "$W/stencil.json"
python3 bench/gen_overlap.py pipeline 2 8 256 256 "$W/pipeline.json"
{
  run stencil "$W/stencil.json"
  run pipeline "$W/pipeline.json"
} | python3 -c "
import sys
rows = [l.split() for l in sys.stdin if l.strip()]
print('| DAG | schedule | wall s | compute s/rank | blocked s/rank |')
print('|---|---|---|---|---|')
by = {}
for name, sched, wall, comp, blocked in rows:
    by[(name, sched)] = float(blocked)
    print(f'| {name} | {sched} | {float(wall):.4f} | {float(comp):.4f} | {float(blocked):.4f} |')
for name in sorted({r[0] for r in rows}):
    o, b = by[(name, 'overlap')], by[(name, 'bulk-synchronous')]
    print(f'{name}: communication hidden = 1 - {o:.4f}/{b:.4f} = {100 * (1 - o / b):.0f}%' if b > 0 else f'{name}: no exposed communication')
"
