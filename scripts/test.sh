#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, then ctest runs the lit
# suite (test/**) and the GoogleTest units.
#   scripts/test.sh              the normal build, in build/
#   scripts/test.sh --sanitize   the same suite under AddressSanitizer and
#                                UBSan, in build-asan/, built with clang
#                                (RANKC_SANITIZE_CXX; clang builds the
#                                sanitized tree in ~5 min where g++ takes
#                                ~13, on 2 cores from nothing)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if [ "${1:-}" = "--sanitize" ]; then
  export RANKC_BUILD_DIR=build-asan RANKC_BUILD_TYPE=RelWithDebInfo
  # Any report fails the run; MLIR's own (uninstrumented) libraries leak
  # nothing we could fix, so leak checking stays on for our code only.
  export ASAN_OPTIONS=abort_on_error=0:halt_on_error=1:detect_leaks=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  CXX=${RANKC_SANITIZE_CXX:-$(command -v clang++-22 || command -v g++)}
  bash scripts/build.sh -DRANKC_SANITIZE=ON -DCMAKE_CXX_COMPILER="$CXX" \
    -DCMAKE_C_COMPILER="$(echo "$CXX" | sed "s/clang++/clang/; s/g++$/gcc/")"
else
  bash scripts/build.sh
fi
ctest --test-dir "${RANKC_BUILD_DIR:-build}" --output-on-failure
