//===- KernelStats.cpp - per-kernel GPU time for --kernel-stats -----------===//

#include "tooling/KernelStats.h"
#include "core/Buffers.h"
#include "cuda/CudaDriver.h"

#include <cstdio>
#include <map>
#include <string>
#include <vector>

namespace rankc::rt {

namespace {

struct Kernel {
  std::string name;
  int64_t launches = 0;
  double seconds = 0;
  intptr_t grid[3] = {0, 0, 0}, block[3] = {0, 0, 0};
};
struct Pending {
  CUstream stream;
  CUfunction function;
  CUevent start, end;
};

bool enabled = false;
/// Made on first use, never by a static initializer: kernels are named
/// while their module loads, in a global constructor of the generated code
/// (priority 123, rankc-gpu-launch-to-llvm) that runs before this file's
/// own constructors would.
struct State {
  std::map<CUfunction, Kernel> stats;
  std::vector<CUfunction> order; // first launch order
  std::vector<Pending> pending;
};
State &state() {
  static State s;
  return s;
}

} // namespace

void enableKernelTiming() { enabled = true; }

void writeKernelStats(const std::string &path) {
  FILE *f = std::fopen(path.c_str(), "w");
  if (!f)
    fail("cannot write kernel stats '%s'", path.c_str());
  std::fprintf(f, "{\"kernels\": [");
  for (size_t i = 0; i < state().order.size(); ++i) {
    const Kernel &k = state().stats[state().order[i]];
    std::fprintf(f,
                 "%s\n  {\"name\": \"%s\", \"launches\": %lld, \"seconds\": "
                 "%.9f, \"grid\": [%ld, %ld, %ld], \"block\": [%ld, %ld, %ld]}",
                 i ? "," : "", k.name.c_str(), (long long)k.launches, k.seconds,
                 (long)k.grid[0], (long)k.grid[1], (long)k.grid[2],
                 (long)k.block[0], (long)k.block[1], (long)k.block[2]);
  }
  std::fprintf(f, "\n]}\n");
  std::fclose(f);
}

namespace kernels {

bool timing() { return enabled; }

void named(CUfunction function, const char *name) {
  state().stats[function].name = name;
}

CUevent beforeLaunch(CUfunction function, CUstream stream,
                     const intptr_t grid[3], const intptr_t block[3]) {
  if (!enabled)
    return nullptr;
  Kernel &k = state().stats[function];
  if (k.launches++ == 0)
    state().order.push_back(function);
  for (int i = 0; i < 3; ++i) {
    k.grid[i] = grid[i];
    k.block[i] = block[i];
  }
  Pending p{stream, function, nullptr, nullptr};
  RANKC_CU(cuEventCreate(&p.start, CU_EVENT_DEFAULT));
  RANKC_CU(cuEventCreate(&p.end, CU_EVENT_DEFAULT));
  RANKC_CU(cuEventRecord(p.start, stream));
  state().pending.push_back(p);
  return p.end;
}

void afterLaunch(CUevent end, CUstream stream) {
  if (end)
    RANKC_CU(cuEventRecord(end, stream));
}

void synchronized(CUstream stream) {
  if (!enabled)
    return;
  std::vector<Pending> left;
  for (const Pending &p : state().pending) {
    if (p.stream != stream) {
      left.push_back(p);
      continue;
    }
    float ms = 0;
    RANKC_CU(cuEventElapsedTime(&ms, p.start, p.end));
    state().stats[p.function].seconds += ms / 1e3;
    RANKC_CU(cuEventDestroy(p.start));
    RANKC_CU(cuEventDestroy(p.end));
  }
  state().pending.swap(left);
}

} // namespace kernels
} // namespace rankc::rt
