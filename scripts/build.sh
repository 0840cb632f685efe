#!/usr/bin/env bash
# Configures and builds rankc into build/ (or $RANKC_BUILD_DIR).
# Extra arguments go to CMake, e.g. -DRANKC_SANITIZE=ON.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${RANKC_BUILD_DIR:-build}
cmake -G Ninja -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE="${RANKC_BUILD_TYPE:-Release}" "$@" >/dev/null
ninja -C "$BUILD_DIR"
