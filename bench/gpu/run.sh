#!/usr/bin/env bash
# The GPU benchmark: generated kernels against the H200's memory bandwidth
# and against cuBLAS (through PyTorch).
#   bash bench/gpu/run.sh prepare   here: compiles the DAGs (.device/bench)
#   bash bench/gpu/run.sh run       on the GPU machine, with MPICH unpacked
#                                   by scripts/device-gpu-check.sh's bundle
# With the `device` tool: run(command="bash bench/gpu/run.sh run",
# carry=[".device"]). Figures go to bench/RESULTS.md by hand.
set -eu
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
N=${N:-268435456}          # 2^28 float32: 1 GiB in, 1 GiB out
SIZES=${SIZES:-"1024 2048 4096 8192"}
case "${1:-}" in
  prepare)
    RANKC=${RANKC:-$ROOT/build/bin/rankc}
    rm -rf .device/bench && mkdir -p .device/bench
    python3 bench/gpu/gen_dags.py .device/bench/dags "$N" $SIZES
    for d in .device/bench/dags/*.json; do
      "$RANKC" compile "$d" --target cuda -o ".device/bench/$(basename "$d" .json)"
    done
    # Overlap on two GPUs: bench/overlap.sh's stencil, 64 MB halos.
    python3 bench/gen_overlap.py stencil 2 8 16777216 4 2 .device/bench/stencil.json
    for sched in overlap bulk-synchronous; do
      "$RANKC" compile .device/bench/stencil.json --target cuda --schedule $sched \
        -o .device/bench/overlap/stencil-$sched
    done
    # DDP buckets on two GPUs: the exported transformer block step
    # (bench/ddp_buckets.sh's transformer-large), three bucketings.
    mkdir -p .device/bench/ddp
    ${RANKC_TORCH_PYTHON:-/usr/bin/python3} scripts/export_torch.py transformer-large \
      .device/bench/ddp/step.json --world-size 2
    "$RANKC" compile .device/bench/ddp/step.json --target cuda -o .device/bench/ddp/ddp \
      --bucket-cap-mb 4 --first-bucket-cap-mb 1
    "$RANKC" compile .device/bench/ddp/step.json --target cuda -o .device/bench/ddp/end \
      --bucket-cap-mb 100000 --first-bucket-cap-mb 100000
    "$RANKC" compile .device/bench/ddp/step.json --target cuda -o .device/bench/ddp/each \
      --bucket-cap-mb 0.000001 --first-bucket-cap-mb 0.000001
    rm .device/bench/ddp/step.json
    [ -f .device/mpich.tar.xz ] || { echo "run scripts/device-gpu-check.sh prepare first" >&2; exit 1; }
    ;;
  run)
    . scripts/device-env.sh
    # KERNELS_ONLY=1: just the kernels against their references (below).
    [ "${KERNELS_ONLY:-0}" = 1 ] || for sched in overlap bulk-synchronous; do
      for i in 1 2 3; do
        .device/bench/overlap/stencil-$sched/launch --outputs /tmp/res-$sched \
          --stats /tmp/stats-$sched-$i.json > /dev/null
      done
      python3 -c "
import json
runs = [json.load(open(f'/tmp/stats-$sched-{i}.json')) for i in (1, 2, 3)]
best = min(runs, key=lambda s: max(r['wall'] for r in s['ranks']))['ranks']
n = len(best)
print('stencil 2 ranks on 2 GPUs, $sched: wall %.4f s, compute %.4f s/rank, blocked %.4f s/rank' % (
    max(r['wall'] for r in best), sum(r['compute'] for r in best) / n, sum(r['blocked'] for r in best) / n))"
    done
    [ "${KERNELS_ONLY:-0}" = 1 ] || for cfg in ddp end each; do
      for i in 1 2 3; do
        .device/bench/ddp/$cfg/launch --outputs /tmp/res-ddp --stats /tmp/ddp-$cfg-$i.json > /dev/null
      done
      python3 -c "
import json
runs = [json.load(open(f'/tmp/ddp-$cfg-{i}.json')) for i in (1, 2, 3)]
best = min(runs, key=lambda s: max(r['wall'] for r in s['ranks']))['ranks']
n = len(best)
print('transformer step, 2 GPUs, buckets $cfg: wall %.4f s, compute %.4f s/rank, blocked %.4f s/rank' % (
    max(r['wall'] for r in best), sum(r['compute'] for r in best) / n, sum(r['blocked'] for r in best) / n))"
    done
    for b in .device/bench/*/launch; do
      case "$b" in *ddp*|*overlap*) continue ;; esac
      dir=$(dirname "$b")
      # 20 steps in one process: the figures below are per launch (mean),
      # so the first launch's one-time costs (module load, cuBLASLt's
      # heuristics and kernel load) count for 1/20, as torch's warm-up does.
      "$b" --outputs "$dir/res" --kernel-stats "$dir/kernels" --stats "$dir/stats.json" \
        --steps 20 > /dev/null
    done
    python3 - "$N" $SIZES <<'PY'
import json, subprocess, sys
n, sizes = int(sys.argv[1]), [int(m) for m in sys.argv[2:]]
ref = json.loads(subprocess.check_output([sys.executable, "bench/gpu/torch_reference.py", str(n)] + [str(m) for m in sizes]))
def kernels(name):
    ks = json.load(open(f".device/bench/{name}/kernels/rank0.json"))["kernels"]
    for k in ks:  # per launch
        k["seconds"] /= max(k["launches"], 1)
    return ks
ks = kernels("chain")
work = max(ks, key=lambda k: k["seconds"])
gbps = lambda b, s: b / s / 1e9
print(f"device: {ref['device']}")
print(f"chain of 8 elementwise ops over {n} f32: {len(ks)} kernel(s); main kernel {work['name']} "
      f"grid {work['grid']} block {work['block']}: {work['seconds']*1e3:.3f} ms = "
      f"{gbps(ref['bytes'], work['seconds']):.0f} GB/s (read x + write y)")
print(f"torch y.copy_(x): {ref['copy_s']*1e3:.3f} ms = {gbps(ref['bytes'], ref['copy_s']):.0f} GB/s; "
      f"torch.mul(x, 2): {ref['scale_s']*1e3:.3f} ms = {gbps(ref['bytes'], ref['scale_s']):.0f} GB/s")
for m in sizes:
    ks = kernels(f"matmul{m}")
    mm = max(ks, key=lambda k: k["seconds"])
    flops = 2 * m ** 3
    t = ref["matmul"][str(m)]
    print(f"matmul {m}x{m}x{m} f32: generated {mm['seconds']*1e3:.2f} ms = {flops/mm['seconds']/1e12:.2f} TFLOP/s "
          f"(block {mm['block']}); cuBLAS (torch, no TF32) {t*1e3:.2f} ms = {flops/t/1e12:.2f} TFLOP/s; "
          f"ratio {t/mm['seconds']:.3f}")
PY
    ;;
  *) echo "usage: run.sh prepare|run" >&2; exit 2 ;;
esac
