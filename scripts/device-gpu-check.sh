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
  *)
    echo "usage: device-gpu-check.sh prepare|run" >&2
    exit 2
    ;;
esac
