#!/usr/bin/env bash
# Installs every system package that building, testing and running rankc need.
# Idempotent: packages already present are skipped by apt-get; safe to run twice.
set -euo pipefail

PKGS=(
  cmake ninja-build make pkgconf ccache g++ python3
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools
  lld zlib1g-dev libzstd-dev libffi-dev
  mpich libmpich-dev
  nlohmann-json3-dev libsimdjson-dev
  libgtest-dev googletest
  python3-numpy python3-torch python3-torchvision
  bc shellcheck
  clang-14 libclang-rt-14-dev clang-22 libclang-rt-22-dev
  libblas-dev libopenblas0-serial
  libomp-22-dev libblis4-serial
)

missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present"
  exit 0
fi

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
