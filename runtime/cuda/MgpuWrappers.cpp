//===- MgpuWrappers.cpp - the mgpu* calls of MLIR's gpu-to-llvm lowering --===//
//
// MLIR's `gpu-to-llvm` lowers launches, streams, events, allocations and
// copies to calls of these functions (the ABI of MLIR's
// CudaRuntimeWrappers.cpp, which Debian does not ship). They run on the CUDA
// driver API; every failure ends the run with the call that failed.
// Kernel modules are loaded by constructors that gpu.binary emits, before
// main(): the driver is opened lazily on first use.
//
//===----------------------------------------------------------------------===//

#include "core/Arena.h"
#include "cuda/CudaDriver.h"
#include "core/Buffers.h"
#include "tooling/KernelStats.h"

#include <cstdint>

using rankc::rt::cuda::driver;

namespace rankc::rt::cuda {
/// The one stream of the process. gpu-async-region asks for a stream per
/// asynchronous region (each part's call, each step); one stream for all of
/// them orders kernels and library calls (cuBLASLt) without host waits
/// between them and creates no stream per step.
CUstream processStream() {
  static CUstream stream = [] {
    CUstream s = nullptr;
    RANKC_CU(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    return s;
  }();
  return stream;
}
} // namespace rankc::rt::cuda


extern "C" {

CUmodule mgpuModuleLoad(void *data, size_t /*size*/) {
  CUmodule module = nullptr;
  RANKC_CU(cuModuleLoadData(&module, data));
  return module;
}

/// PTX (gpu-module-to-binary format=isa): compiled by the driver's JIT.
CUmodule mgpuModuleLoadJIT(void *data, int optLevel, size_t /*size*/) {
  CUmodule module = nullptr;
  CUjit_option options[] = {CU_JIT_OPTIMIZATION_LEVEL};
  void *values[] = {reinterpret_cast<void *>(intptr_t(optLevel))};
  RANKC_CU(cuModuleLoadDataEx(&module, data, 1, options, values));
  return module;
}

/// Called by a destructor at exit, when the driver may already be shutting
/// down: the process ends anyway, so failures are not errors here.
void mgpuModuleUnload(CUmodule module) {
  (void)driver().cuModuleUnload(module);
}

CUfunction mgpuModuleGetFunction(CUmodule module, const char *name) {
  CUfunction function = nullptr;
  RANKC_CU(cuModuleGetFunction(&function, module, name));
  rankc::rt::kernels::named(function, name);
  return function;
}

void mgpuLaunchKernel(CUfunction function, intptr_t gridX, intptr_t gridY,
                      intptr_t gridZ, intptr_t blockX, intptr_t blockY,
                      intptr_t blockZ, int32_t smem, CUstream stream,
                      void **params, void **extra, size_t /*paramsCount*/) {
  // A loop over an empty tensor (a zero-size slice) launches nothing: CUDA
  // would reject a grid with a zero dimension.
  if (!gridX || !gridY || !gridZ || !blockX || !blockY || !blockZ)
    return;
  const intptr_t grid[3] = {gridX, gridY, gridZ},
                 block[3] = {blockX, blockY, blockZ};
  CUevent end = rankc::rt::kernels::beforeLaunch(function, stream, grid, block);
  RANKC_CU(cuLaunchKernel(function, gridX, gridY, gridZ, blockX, blockY,
                          blockZ, smem, stream, params, extra));
  rankc::rt::kernels::afterLaunch(end, stream);
}

CUstream mgpuStreamCreate() { return rankc::rt::cuda::processStream(); }

/// The process's stream lives as long as the process.
void mgpuStreamDestroy(CUstream) {}

/// The host waits for a function's kernels here (before it calls the
/// runtime or returns). It polls rather than blocks: meanwhile MPI moves the
/// messages in flight, so kernels and communication overlap.
void mgpuStreamSynchronize(CUstream stream) {
  if (rankc::rt::recordingStep())
    return; // nothing runs while a step is recorded (CudaGraphs.cpp)
  for (;;) {
    CUresult state = driver().cuStreamQuery(stream);
    if (state == CUDA_SUCCESS)
      break;
    if (state != CUDA_ERROR_NOT_READY)
      rankc::rt::cuda::check(state, "cuStreamQuery(stream)");
    rankc::rt::progressCommunication();
  }
  rankc::rt::kernels::synchronized(stream);
}

void mgpuStreamWaitEvent(CUstream stream, CUevent event) {
  RANKC_CU(cuStreamWaitEvent(stream, event, 0));
}

CUevent mgpuEventCreate() {
  CUevent event = nullptr;
  RANKC_CU(cuEventCreate(&event, CU_EVENT_DISABLE_TIMING));
  return event;
}

void mgpuEventDestroy(CUevent event) { RANKC_CU(cuEventDestroy(event)); }

void mgpuEventSynchronize(CUevent event) {
  RANKC_CU(cuEventSynchronize(event));
}

void mgpuEventRecord(CUevent event, CUstream stream) {
  RANKC_CU(cuEventRecord(event, stream));
}

/// Every gpu.alloc of a step comes from the step's arena (Arena.h): no
/// cuMemAlloc per buffer per step, and memory that stays flat over steps.
void *mgpuMemAlloc(uint64_t bytes, CUstream /*stream*/, bool hostShared) {
  if (bytes == 0)
    return nullptr;
  if (hostShared)
    rankc::rt::fail("host-shared GPU allocations are not supported");
  return rankc::rt::programArenas().now().allocate(bytes);
}

/// Arena memory is reclaimed between steps, never one buffer at a time.
void mgpuMemFree(void *, CUstream /*stream*/) {}

void mgpuMemcpy(void *dst, void *src, size_t bytes, CUstream stream) {
  if (bytes)
    RANKC_CU(cuMemcpyAsync(CUdeviceptr(dst), CUdeviceptr(src), bytes, stream));
}

void mgpuMemset32(void *dst, unsigned value, size_t count, CUstream stream) {
  RANKC_CU(cuMemsetD32Async(CUdeviceptr(dst), value, count, stream));
}

void mgpuMemset16(void *dst, unsigned short value, size_t count,
                  CUstream stream) {
  RANKC_CU(cuMemsetD16Async(CUdeviceptr(dst), value, count, stream));
}

void mgpuSetDefaultDevice(int32_t /*device*/) {}

} // extern "C"
