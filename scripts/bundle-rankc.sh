#!/usr/bin/env bash
# Packs rankc itself for a machine that has no LLVM 22 and where nothing can
# be installed (the GPU machines of the `device` tool), so that compile time
# can be measured there (bench/compile_cores.sh: 16 cores where this machine
# has 2). The build's own link line is run again, stripped and with
# libstdc++ and libgcc static (that machine has another system); a build
# with RANKC_LLVM_LINKAGE=shared has its libLLVM and libMLIR (250 MB, over
# the 64 MiB that `device` carries) swapped for LLVM's and MLIR's static
# archives (only what rankc uses: ~120 MB, ~23 MB compressed). The runtime
# archives lie beside it as an installed rankc has them (bin/rankc,
# lib/rankc/).
#   bash scripts/bundle-rankc.sh OUT.tar.xz     (after scripts/build.sh)
# On the other machine: tar -xJf OUT.tar.xz -C DIR; DIR/bin/rankc ...
# (DIR/lib on LD_LIBRARY_PATH: it holds libsimdjson).
set -euo pipefail
OUT=${1:?usage: bundle-rankc.sh OUT.tar.xz}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${RANKC_BUILD:-$ROOT/build}
LLVM_LIB=${LLVM_LIB:-/usr/lib/llvm-22/lib}
ninja -C "$BUILD" bin/rankc rankc_runtime rankc_runtime_cuda > /dev/null
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/lib/rankc"
# The build's own link line, with the shared LLVM/MLIR swapped for archives
# (one group: they reference each other in every direction).
link=$(ninja -C "$BUILD" -t commands bin/rankc | tail -n 1)
link=${link#*&& }
link=${link%% && *}
args=()
for a in $link; do
  # (-Wl,--start-group: commas inside one argument)
  # shellcheck disable=SC2054
  case $a in
    -o) args+=(-o) ;;
    bin/rankc) args+=("$STAGE/bin/rankc") ;;
    *libMLIR.so*) args+=(-Wl,--start-group "$LLVM_LIB"/libMLIR*.a
                         "$LLVM_LIB"/libLLVM*.a -Wl,--end-group) ;;
    *libLLVM.so*) ;;
    -Wl,-rpath,*) ;;
    *) args+=("$a") ;;
  esac
done
# '$ORIGIN' is for the linker, not the shell.
# shellcheck disable=SC2016
(cd "$BUILD" && "${args[@]}" -fuse-ld=lld -Wl,--gc-sections -Wl,-s \
  -static-libstdc++ -static-libgcc -Wl,-rpath,'$ORIGIN/../lib' \
  /usr/lib/x86_64-linux-gnu/libzstd.so.1 /usr/lib/x86_64-linux-gnu/libz.a \
  -lpthread -ldl)
cp "$BUILD"/lib/rankc/librankc_runtime*.a "$STAGE/lib/rankc/"
cp -L /usr/lib/x86_64-linux-gnu/libsimdjson.so.* "$STAGE/lib/" 2>/dev/null || true
tar -C "$STAGE" -cf - . | xz -T0 -6 > "$OUT"
du -h "$OUT" | sed 's/^/bundle-rankc: /'
