//===- KernelStats.h - per-kernel GPU time for --kernel-stats --*- C++ -*-===//
//
// When enabled, each launch is bracketed by two CUDA events on its stream;
// the elapsed time is read once the host has waited for the stream anyway
// (mgpuStreamSynchronize), so timing adds no synchronization of its own.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_KERNELSTATS_H
#define RANKC_RUNTIME_KERNELSTATS_H

#include <cuda.h>

#include <cstdint>

namespace rankc::rt::kernels {

bool timing();
void named(CUfunction function, const char *name);
/// Returns the event to record after the launch (null when not timing).
CUevent beforeLaunch(CUfunction function, CUstream stream,
                     const intptr_t grid[3], const intptr_t block[3]);
void afterLaunch(CUevent end, CUstream stream);
void synchronized(CUstream stream);

} // namespace rankc::rt::kernels

#endif // RANKC_RUNTIME_KERNELSTATS_H
