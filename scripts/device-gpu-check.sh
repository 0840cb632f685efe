#!/usr/bin/env bash
# The CUDA backend on a GPU machine, checked against the CPU backend
# (scripts/gpu_check.py) on every example, every op of the spec, the
# data-parallel MLP step and random programs of 1 to 4 ranks.
#
#   bash scripts/device-gpu-check.sh prepare
#       here (needs the build, MPICH, NumPy): compiles everything for both
#       targets, runs the CPU builds, and writes .device/ (gitignored):
#       gpu-check/ (the cases) and mpich.tar.xz (scripts/bundle-mpich.sh).
#   bash scripts/device-gpu-check.sh run
#       on the GPU machine (no MPICH there, nothing installable): unpacks
#       MPICH into /tmp and runs every CUDA build, comparing outputs; then
#       exports the zoo's models under that machine's PyTorch 2.x.
#       With the `device` tool: run(command="bash scripts/device-gpu-check.sh
#       run", carry=[".device"], kind="nvidia-h200" or "nvidia-h200-x2").
#       `run NAME...` runs only the cases whose names contain a NAME.
#   bash scripts/device-gpu-check.sh split K
#       here, after prepare: the cases in K groups of about equal size,
#       .device/split/I/gpu-check (I = 1..K), for when the whole check is
#       more than a device call may carry (64 MiB, MPICH's 8 included).
#       Run group I there with carry=[".device/mpich.tar.xz",
#       ".device/split/I"] and command "bash scripts/device-gpu-check.sh
#       run-split I" (the exporter's check runs with group 1 only).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
case "${1:-}" in
  prepare)
    RANKC=${RANKC:-$ROOT/build/bin/rankc}
    rm -rf .device/gpu-check .device/mpich.tar.xz && mkdir -p .device
    STAGE=$(mktemp -d)
    bash scripts/bundle-mpich.sh "$STAGE/mpich"
    tar -C "$STAGE/mpich" -cJf .device/mpich.tar.xz .
    rm -rf "$STAGE"
    PATH=/usr/lib/llvm-22/bin:$PATH /usr/bin/python3 scripts/gpu_check.py \
      prepare "$RANKC" .device/gpu-check
    du -sh .device
    ;;
  run)
    . scripts/device-env.sh
    nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader || true
    python3 scripts/gpu_check.py compare .device/gpu-check "${@:2}"
    # The exporter under the GPU machine's PyTorch (2.x): every model of the
    # zoo traces (ZOO_DAGS=DIR test/DataParallel/zoo.py checks the documents
    # against PyTorch 1.13 on a machine with the compiler).
    if [ $# -le 1 ]; then
      python3 test/DataParallel/zoo.py --export-only "$(mktemp -d)" 2
    fi
    ;;
  split)
    K=${2:?usage: device-gpu-check.sh split K}
    rm -rf .device/split
    # Largest case first into the lightest group: groups within one case
    # of each other.
    /usr/bin/python3 - "$K" <<'PY'
import os, shutil, subprocess, sys
k = int(sys.argv[1])
cases = [d for d in sorted(os.listdir(".device/gpu-check"))
         if os.path.isdir(os.path.join(".device/gpu-check", d))]
size = {c: int(subprocess.check_output(["du", "-sk", os.path.join(".device/gpu-check", c)]).split()[0])
        for c in cases}
groups = [[0, []] for _ in range(k)]
for c in sorted(cases, key=lambda c: -size[c]):
    g = min(groups, key=lambda g: g[0])
    g[0] += size[c]
    g[1].append(c)
for i, (kib, names) in enumerate(groups, 1):
    dest = f".device/split/{i}/gpu-check"
    os.makedirs(dest)
    for c in names:
        shutil.copytree(os.path.join(".device/gpu-check", c), os.path.join(dest, c))
    print(f".device/split/{i}: {len(names)} cases, {kib / 1024:.1f} MiB")
PY
    ;;
  run-split)
    I=${2:?usage: device-gpu-check.sh run-split I}
    rm -rf .device/gpu-check
    mv ".device/split/$I/gpu-check" .device/gpu-check
    if [ "$I" = 1 ]; then exec bash "$0" run; fi
    exec bash "$0" run ""
    ;;
  *)
    echo "usage: device-gpu-check.sh prepare|run|split K|run-split I" >&2
    exit 2
    ;;
esac
