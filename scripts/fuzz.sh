#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, instrumented, ASan + UBSan) into
# build-fuzz/ and runs each for SECONDS (default 60) on a corpus seeded
# from the test inputs and examples:
#   rankc-dag-fuzzer    JSON documents: read, check, import, verify
#   rankc-mlir-fuzzer   .mlir modules: parse (every verifier), comm-verify-ranks
#
#   bash scripts/fuzz.sh [SECONDS] [dag|mlir ...]
#
# Prints, per target, the executions, executions per second and the
# coverage (libFuzzer's `cov`: instrumented edges reached) at the end. A
# crash, a hang (over 10 s on one input), a sanitizer report or an input
# over 4 GB of memory fails the run; the input that did it is kept as
# build-fuzz/findings/<target>/crash-* (or timeout-*, oom-*), which the
# target reproduces when given it as its argument. The corpus grows in
# build-fuzz/corpus/<target> from run to run.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(dag mlir)
for t in "${TARGETS[@]}"; do
  case $t in
    dag|mlir) ;;
    *) echo "error: unknown fuzz target '$t' (dag or mlir)" >&2; exit 2 ;;
  esac
done
case $SECONDS_EACH in
  ''|*[!0-9]*) echo "error: SECONDS must be a whole number, got '$SECONDS_EACH'" >&2; exit 2 ;;
esac
BUILD=${RANKC_FUZZ_BUILD_DIR:-build-fuzz}
CXX=${RANKC_FUZZ_CXX:-$(command -v clang++ || command -v clang++-14 || true)}
if [ -z "$CXX" ]; then
  echo "error: fuzz.sh needs clang++ (libFuzzer); scripts/install-deps.sh installs it" >&2
  exit 1
fi
CC=${CXX/clang++/clang}
cmake -G Ninja -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" -DRANKC_FUZZ=ON >/dev/null
ninja -C "$BUILD" $(printf 'rankc-%s-fuzzer ' "${TARGETS[@]}")

# Seeds: every JSON document and MLIR file of the tests and examples (the
# documents inside split-file tests included).
seed() { # seed TARGET EXT
  local dir="$BUILD/seeds/$1"
  rm -rf "$dir" && mkdir -p "$dir"
  find test examples -name "*.$2" -size -256k | while read -r f; do
    cp "$f" "$dir/$(echo "$f" | tr '/' '_')"
  done
  grep -rl --include='*.test' -e "^#--- .*\.$2\$" test |
    while read -r f; do
      awk -v dir="$dir" -v base="$(echo "$f" | tr '/' '_')" -v ext="$2" '
        /^(#|\/\/)--- / { name = $2; out = (name ~ ("\\." ext "$")) ? dir "/" base "_" name : ""; next }
        out != "" { print > out }' "$f"
    done
  ls "$dir" | wc -l
}

status=0
for t in "${TARGETS[@]}"; do
  ext=$([ "$t" = dag ] && echo json || echo mlir)
  n=$(seed "$t" "$ext")
  corpus="$BUILD/corpus/$t" findings="$BUILD/findings/$t"
  mkdir -p "$corpus" "$findings"
  log="$BUILD/fuzz-$t.log"
  echo "rankc-$t-fuzzer: $SECONDS_EACH s, $n seeds"
  # Leaks are not findings here: MLIR keeps what a context uniqued.
  if ! ASAN_OPTIONS=detect_leaks=0:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
      "$BUILD/bin/rankc-$t-fuzzer" "$corpus" "$BUILD/seeds/$t" \
      -max_total_time="$SECONDS_EACH" -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
      -print_final_stats=1 -artifact_prefix="$findings/" >"$log" 2>&1; then
    echo "error: rankc-$t-fuzzer found a problem (log: $log):" >&2
    grep -E "ERROR|SUMMARY|Test unit written|rankc-.*-fuzzer:" "$log" | head -20 >&2
    status=1
    continue
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  units=$(ls "$corpus" | wc -l)
  echo "rankc-$t-fuzzer: $runs runs, $rate per second, cov $cov edges, corpus $units inputs"
done
exit $status
