#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, instrumented, ASan + UBSan) into
# build-fuzz/ and runs each for SECONDS (default 60) on a corpus seeded
# from the test inputs and examples:
#   rankc-dag-fuzzer    JSON documents: read, check, import, verify
#   rankc-mlir-fuzzer   .mlir modules: parse (every verifier), comm-verify-ranks
#   rankc-compile-fuzzer JSON documents through the whole compile path: the
#                       partitioning pipeline, then every program lowered
#                       for the CPU (to LLVM IR) and for CUDA (LLVM IR kernels)
#
#   bash scripts/fuzz.sh [SECONDS] [dag|mlir|compile ...]
#
# Prints, per target, the executions, executions per second and the
# coverage (libFuzzer's `cov`: instrumented edges reached) at the end. A
# crash, a hang (over 10 s on one input), a sanitizer report or an input
# over 4 GB of memory in rankc's code fails the run; the input that did it
# is kept as build-fuzz/findings/<target>/crash-* (or timeout-*, oom-*),
# with its stack in *.trace; the target reproduces it when given it as its
# argument. One wholly inside Debian's libMLIR is listed and kept in
# findings/<target>/upstream/ instead. The corpus grows in
# build-fuzz/corpus/<target> from run to run. The mutations start from
# seed 1 (RANKC_FUZZ_SEED), so that CI's runs can be repeated.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_EACH=${1:-60}
shift || true
TARGETS=("$@")
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(dag mlir compile)
for t in "${TARGETS[@]}"; do
  case $t in
    dag|mlir|compile) ;;
    *) echo "error: unknown fuzz target '$t' (dag, mlir or compile)" >&2; exit 2 ;;
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
FUZZERS=()
for t in "${TARGETS[@]}"; do FUZZERS+=("rankc-$t-fuzzer"); done
ninja -C "$BUILD" "${FUZZERS[@]}"

# Seeds: every JSON document and MLIR file of the tests and examples (the
# documents inside split-file tests included).
# The compile target builds each input whole (seconds for a model under
# ASan): its seeds are the small documents, and an input may take 60 s.
seed() { # seed TARGET EXT
  local dir="$BUILD/seeds/$1" max=256k
  [ "$1" = compile ] && max=8k
  rm -rf "$dir" && mkdir -p "$dir"
  find test examples -name "*.$2" -size -$max | while read -r f; do
    cp "$f" "$dir/$(echo "$f" | tr '/' '_')"
  done
  grep -rl --include='*.test' -e "^#--- .*\.$2\$" test |
    while read -r f; do
      awk -v dir="$dir" -v base="$(echo "$f" | tr '/' '_')" -v ext="$2" '
        /^(#|\/\/)--- / { name = $2; out = (name ~ ("\\." ext "$")) ? dir "/" base "_" name : ""; next }
        out != "" { print > out }' "$f"
    done
  [ "$1" = compile ] && find "$dir" -type f -size +8k -delete
  find "$dir" -mindepth 1 -maxdepth 1 | wc -l
}

status=0
for t in "${TARGETS[@]}"; do
  ext=$([ "$t" = mlir ] && echo mlir || echo json)
  n=$(seed "$t" "$ext")
  corpus="$BUILD/corpus/$t" findings="$BUILD/findings/$t"
  rm -rf "$findings" && mkdir -p "$corpus" "$findings/upstream"
  log="$BUILD/fuzz-$t.log"
  fuzzer="$BUILD/bin/rankc-$t-fuzzer"
  limit=10
  [ "$t" = compile ] && limit=60
  echo "rankc-$t-fuzzer: $SECONDS_EACH s, $n seeds"
  # Fork mode: an input that crashes, hangs (10 s) or takes 4 GB is kept
  # and fuzzing goes on; each is then run again alone and triaged below.
  # Leaks are not findings here: MLIR keeps what a context uniqued.
  ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "$fuzzer" "$corpus" "$BUILD/seeds/$t" -fork=1 -ignore_crashes=1 \
    -ignore_timeouts=1 -ignore_ooms=1 -max_total_time="$SECONDS_EACH" \
    -seed="${RANKC_FUZZ_SEED:-1}" -timeout=$limit -rss_limit_mb=4096 -max_len=65536 \
    -artifact_prefix="$findings/" >"$log" 2>&1 || true
  last=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1)
  runs=$(echo "$last" | sed -n 's/^#\([0-9]*\):.*/\1/p')
  rate=$(echo "$last" | sed -n 's/.*exec\/s \([0-9]*\).*/\1/p')
  cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
  echo "rankc-$t-fuzzer: ${runs:-0} runs, ${rate:-0} per second, cov ${cov:-0} edges, corpus $(find "$corpus" -mindepth 1 -maxdepth 1 | wc -l) inputs"
  # A finding is ours when a frame of its stack is rankc's code (namespace
  # rankc); one wholly inside Debian's libMLIR (its parser has crashes of
  # its own on malformed text) is listed, kept in upstream/, and does not
  # fail the run: there is nothing to fix in this tree.
  for f in "$findings"/crash-* "$findings"/timeout-* "$findings"/oom-*; do
    [ -e "$f" ] || continue
    trace="$f.trace"
    rc=0
    ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
      timeout $((limit * 6)) "$fuzzer" -timeout=$limit -rss_limit_mb=4096 "$f" >"$trace" 2>&1 || rc=$?
    # A timeout or out-of-memory of fork mode's loaded machine that runs
    # clean alone (exit 0, within the limits) is no finding: kept in
    # unreproduced/ with how long it took alone, and listed.
    if [ "$rc" -eq 0 ] && [ "${f##*/crash-}" = "$f" ]; then
      mkdir -p "$findings/unreproduced"
      echo "rankc-$t-fuzzer: not reproduced alone: $(basename "$f"): $(grep -m1 '^Executed' "$trace")"
      mv "$f" "$trace" "$findings/unreproduced/"
      continue
    fi
    top=$(grep -m1 -E '^ +#0 ' "$trace" | sed 's/^ *#0 0x[0-9a-f]* in //' | cut -c1-120)
    # (The harness's own aborts on a broken invariant, which it announces
    # on a line of its own, are ours too.)
    if grep -qE '^ +#[0-9]+ .* in rankc::' "$trace" ||
       grep -q "^rankc-$t-fuzzer: " "$trace" || ! grep -qE '^ +#[0-9]+ ' "$trace"; then
      # (On stdout as well: CI's record keeps stdout; the input is
      # printed so that the finding can be replayed from the record.)
      echo "error: rankc-$t-fuzzer: $(basename "$f") in rankc's code: ${top:-no stack (see $trace)}" | tee /dev/stderr
      echo "rankc-$t-fuzzer: the input, base64: $(head -c 4096 "$f" | base64 -w0)"
      grep -E '^ +#[0-9]+ ' "$trace" | head -12
      status=1
    else
      echo "rankc-$t-fuzzer: upstream (libMLIR only, not ours): $(basename "$f"): $top"
      mv "$f" "$trace" "$findings/upstream/"
    fi
  done
done
exit $status
