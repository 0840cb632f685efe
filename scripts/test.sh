#!/usr/bin/env bash
# Runs every test: installs what is missing, builds, then ctest runs the lit
# suite (test/**) and the GoogleTest units.
#   scripts/test.sh              the normal build, in build/
#   scripts/test.sh --sanitize   the same suite under AddressSanitizer and
#                                UBSan, in build-asan/
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
if [ "${1:-}" = "--sanitize" ]; then
  export RANKC_BUILD_DIR=build-asan RANKC_BUILD_TYPE=RelWithDebInfo
  # Any report fails the run; MLIR's own (uninstrumented) libraries leak
  # nothing we could fix, so leak checking stays on for our code only.
  export ASAN_OPTIONS=abort_on_error=0:halt_on_error=1:detect_leaks=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  bash scripts/build.sh -DRANKC_SANITIZE=ON
else
  bash scripts/build.sh
fi
ctest --test-dir "${RANKC_BUILD_DIR:-build}" --output-on-failure
