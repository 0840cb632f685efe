#!/usr/bin/env bash
# Copies what MPICH-linked programs need at run time into DEST, for machines
# that have no MPICH and where nothing can be installed (the GPU machines of
# the `device` tool): Hydra's mpiexec and proxy in DEST/bin, libmpich and its
# libraries (debug info stripped: ~6 MB instead of 40) in DEST/lib.
# Use: RANKC_MPIEXEC=DEST/bin/mpiexec LD_LIBRARY_PATH=DEST/lib OUT/launch ...
set -eu
DEST=${1:?usage: bundle-mpich.sh DEST}
LIBDIR=/usr/lib/x86_64-linux-gnu
mkdir -p "$DEST/bin" "$DEST/lib"
cp -L /usr/bin/mpiexec.hydra "$DEST/bin/mpiexec"
cp -L /usr/bin/hydra_pmi_proxy "$DEST/bin/"
for lib in libmpich.so.12 libhwloc.so.15 libucp.so.0 libucs.so.0 libuct.so.0 \
           libucm.so.0 libnuma.so.1 libslurm.so.38 libudev.so.1; do
  cp -L "$LIBDIR/$lib" "$DEST/lib/"
  strip --strip-debug "$DEST/lib/$lib"
done
# UCX's transports are plugins, found next to libuct (ucx/ in its folder).
mkdir -p "$DEST/lib/ucx"
cp -L "$LIBDIR"/ucx/libuct_cma.so.0 "$DEST/lib/ucx/" 2>/dev/null || true
du -sh "$DEST" | sed 's/^/bundle-mpich: /'
