# shellcheck shell=bash
# Sourced on the GPU machine (no MPICH there, nothing installable): unpacks
# the MPICH that scripts/device-gpu-check.sh prepare bundled into .device/
# and points the compiled programs at it and at PyTorch's cuBLASLt.
#   . scripts/device-env.sh
MPICH=/tmp/rankc-mpich
if [ ! -x "$MPICH/bin/mpiexec" ]; then
  mkdir -p "$MPICH" && tar -C "$MPICH" -xJf .device/mpich.tar.xz
fi
export RANKC_MPIEXEC=$MPICH/bin/mpiexec
export LD_LIBRARY_PATH=$MPICH/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export UCX_MODULE_DIR=$MPICH/lib/ucx
# cuBLASLt for the programs' matmuls: no toolkit there, but PyTorch's
# nvidia-cublas wheel has it.
if [ -z "${RANKC_CUBLASLT:-}" ]; then
  RANKC_CUBLASLT=$(python3 -c "
import glob, os, sys
hits = [h for p in sys.path if os.path.isdir(p)
        for h in glob.glob(os.path.join(p, 'nvidia', '**', 'libcublasLt.so.13*'), recursive=True)]
print(sorted(hits)[0] if hits else '')" 2>/dev/null || true)
  export RANKC_CUBLASLT
fi
echo "cuBLASLt: ${RANKC_CUBLASLT:-from the loader path}"
