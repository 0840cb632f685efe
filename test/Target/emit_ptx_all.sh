#!/usr/bin/env bash
# emit_ptx_all.sh OUTDIR DAG.json...: `rankc compile --target cuda --emit ptx`
# of each DAG into OUTDIR/<name>.ptx; prints "FAILED <dag>" for each failure.
out=$1; shift
for dag in "$@"; do
  rankc compile "$dag" --target cuda --emit ptx -o "$out/$(basename "$dag" .json).ptx" ||
    echo "FAILED $dag"
done
