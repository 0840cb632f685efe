#!/usr/bin/env bash
# Training step of exported PyTorch models on 2 ranks: an MLP (512-1024x4-16,
# 64-row batch; `export_torch.py mlp-large`) and a transformer block (d=256,
# hidden 1024, 4x64 tokens; `transformer-large`): rankc's DDP buckets vs one
# reduction at the end (one bucket holding every gradient) vs one reduction
# per gradient. Wall time of the step (best of 3) and the time each rank
# spends blocked in MPI (communication left exposed), from --stats.
# usage: bench/ddp_buckets.sh [RANKC]
set -euo pipefail
cd "$(dirname "$0")/.."
RANKC=${1:-build/bin/rankc}
W=${RANKC_BENCH_DATA:-/tmp/rankc-ddp}
PY=${RANKC_TORCH_PYTHON:-/usr/bin/python3}
mkdir -p "$W"
echo "| model | buckets | flags | buckets | wall s | blocked s/rank |"
echo "|---|---|---|---|---|---|"
for model in mlp-large transformer-large; do
$PY scripts/export_torch.py $model "$W/mlp.json" --world-size 2
for cfg in "DDP:--bucket-cap-mb 4 --first-bucket-cap-mb 1" \
           "one at the end:--bucket-cap-mb 100000 --first-bucket-cap-mb 100000" \
           "one per gradient:--bucket-cap-mb 0.000001 --first-bucket-cap-mb 0.000001"; do
  name=${cfg%%:*}; flags=${cfg#*:}
  $RANKC compile "$W/mlp.json" -o "$W/exe" $flags --verbose 2> "$W/table.txt"
  n=$(head -1 "$W/table.txt" | awk '{print $2}')
  best=""; bestb=""
  for i in 1 2 3; do
    "$W/exe/launch" --outputs "$W/res" --stats "$W/stats.json" > /dev/null
    read -r wall blocked < <($PY -c "
import json; s=json.load(open('$W/stats.json'))['ranks']
print(max(r['wall'] for r in s), sum(r['blocked'] for r in s)/len(s))")
    if [ -z "$best" ] || [ "$(echo "$wall < $best" | bc)" = 1 ]; then best=$wall; bestb=$blocked; fi
  done
  printf "| %s | %s | %s | %s | %.4f | %.4f |\n" "$model" "$name" "$flags" "$n" "$best" "$bestb"
done
done
