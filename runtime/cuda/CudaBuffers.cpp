//===- CudaBuffers.cpp - the CUDA runtime's buffers: device memory --------===//
//
// Generated code allocates its buffers with cuMemAlloc (mgpuMemAlloc). MPI
// gets them directly when the library says it is CUDA-aware
// (MPIX_Query_cuda_support); otherwise, as with Debian's MPICH, messages are
// staged through pinned host buffers, which copy at full PCIe speed.
// RANKC_CUDA_AWARE_MPI=0 forces staging.
//
//===----------------------------------------------------------------------===//

#include "core/Arena.h"
#include "core/Buffers.h"
#include "cuda/CudaDriver.h"

#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <vector>

namespace rankc::rt {

namespace {
bool cudaAwareMpi = false;
size_t held = 0; // by allocBuffer

void *deviceAlloc(size_t bytes) {
  CUdeviceptr p = 0;
  CUresult r = cuda::driver().cuMemAlloc(&p, bytes ? bytes : 1);
  if (r == CUDA_ERROR_OUT_OF_MEMORY)
    return nullptr; // the arena reports it with the size it needed
  cuda::check(r, "cuMemAlloc");
  return reinterpret_cast<void *>(p);
}
void deviceFree(void *p) {
  if (p)
    RANKC_CU(cuMemFree(CUdeviceptr(p)));
}
// A carried value moved out of the arena a step reuses (Arena.h): on the
// process stream, before the step's kernels that read it. (A cuMemcpy from
// device to device is asynchronous and on the legacy stream, which the
// non-blocking process stream does not wait for: the update step after a
// micro-step read parameters and Adam moments while they were being moved.)
void deviceCopy(void *dst, const void *src, size_t bytes) {
  if (bytes)
    RANKC_CU(cuMemcpyAsync(CUdeviceptr(dst), CUdeviceptr(src), bytes,
                           cuda::processStream()));
}
} // namespace

void *allocBuffer(size_t bytes, const std::string &what) {
  void *p = deviceAlloc(bytes);
  if (!p)
    fail("out of GPU memory: could not allocate %zu bytes for %s", bytes,
         what.c_str());
  // Zeroed on the process stream, before any kernel the caller queues on
  // it: cuMemsetD8 runs on the legacy stream, which the non-blocking
  // process stream does not wait for, and may return before it lands; a
  // step's planned block, allocated in its first step, was zeroed after
  // the kernels that had begun to write it (NaN gradients of a GPT step,
  // a wrong heat total, only under the memory plan and only without
  // CUDA_LAUNCH_BLOCKING).
  RANKC_CU(cuMemsetD8Async(CUdeviceptr(p), 0, bytes ? bytes : 1,
                           cuda::processStream()));
  held += bytes;
  return p;
}
void freeBuffer(void *buffer) { deviceFree(buffer); }
// Device memory for the generated code's gpu.alloc: a caching allocator in
// effect, since a step's buffers are carved from blocks kept across steps.
StepArenas &programArenas() {
  static StepArenas arenas(deviceAlloc, deviceFree, deviceCopy);
  return arenas;
}
size_t deviceBytesInUse() {
  size_t free = 0, total = 0;
  RANKC_CU(cuMemGetInfo(&free, &total));
  return total - free;
}
size_t bufferBytesHeld() {
  StepArenas &a = programArenas();
  return held + a.arenas[0].reserved() + a.arenas[1].reserved();
}

void initBuffers(int) {
  cuda::driver();
  cudaAwareMpi = MPIX_Query_cuda_support() == 1;
  if (const char *v = std::getenv("RANKC_CUDA_AWARE_MPI"))
    cudaAwareMpi = cudaAwareMpi && std::strcmp(v, "0") != 0;
}

bool buffersOnDevice() { return true; }
bool mpiTakesBuffers() { return cudaAwareMpi; }

// Pinned blocks kept for reuse. cuMemAllocHost of the 100 MB of a step's
// gradients costs tens of milliseconds, many times the copy: each step
// stages the same messages, so after the first step they come from here.
namespace {
std::multimap<size_t, void *> freeStagingBlocks; // by size
std::map<void *, size_t> stagingSizes;
} // namespace

void *allocStaging(size_t bytes) {
  bytes = bytes ? bytes : 1;
  // The smallest free block that fits without wasting more than half.
  auto it = freeStagingBlocks.lower_bound(bytes);
  if (it != freeStagingBlocks.end() && it->first <= 2 * bytes) {
    void *p = it->second;
    freeStagingBlocks.erase(it);
    return p;
  }
  void *p = nullptr;
  RANKC_CU(cuMemAllocHost(&p, bytes));
  stagingSizes[p] = bytes;
  return p;
}

void freeStaging(void *host) {
  if (host)
    freeStagingBlocks.emplace(stagingSizes.at(host), host);
}

void releaseStaging() {
  for (auto &[bytes, host] : freeStagingBlocks) {
    RANKC_CU(cuMemFreeHost(host));
    stagingSizes.erase(host);
  }
  freeStagingBlocks.clear();
}

void copyBuffer(void *dst, const void *src, size_t bytes) {
  if (bytes)
    RANKC_CU(cuMemcpyAsync(CUdeviceptr(dst), CUdeviceptr(src), bytes,
                           cuda::processStream()));
}

extern "C" void mgpuStreamSynchronize(CUstream stream); // MgpuWrappers.cpp

// Polls (and drives MPI meanwhile), as generated code's own waits do.
void synchronizeBuffers() { mgpuStreamSynchronize(cuda::processStream()); }

void copyToHost(void *host, const void *buffer, size_t bytes) {
  synchronizeBuffers();
  if (bytes)
    RANKC_CU(cuMemcpy(CUdeviceptr(host), CUdeviceptr(buffer), bytes));
}

void copyFromHost(void *buffer, const void *host, size_t bytes) {
  synchronizeBuffers();
  if (!bytes)
    return;
  // From pinned memory a cuMemcpy is synchronous with the host. From
  // pageable memory it returns once the bytes are staged, before their DMA
  // lands, on the legacy stream, which the non-blocking process stream does
  // not wait for: the next step's kernels could read the old value (a
  // `step` leaf, a fed row, a library caller's input). So pageable values go
  // through a pinned block. (Enqueueing the copy on the process stream and
  // waiting for it instead made staged receives of 4 and 8 ranks sharing a
  // GPU come out wrong on an H100: the GPU check's random14-4ranks,
  // v3-heat-2x2x2-20steps.)
  bool pinned = stagingSizes.count(const_cast<void *>(host)) != 0;
  void *from = pinned ? const_cast<void *>(host) : allocStaging(bytes);
  if (!pinned)
    std::memcpy(from, host, bytes);
  RANKC_CU(cuMemcpy(CUdeviceptr(buffer), CUdeviceptr(from), bytes));
  if (!pinned)
    freeStaging(from);
}

void copyFromStaging(void *buffer, const void *staging, size_t bytes) {
  // Pinned memory: the DMA runs in stream order, after the step before and
  // before this step's kernels (or its graph's replay).
  if (bytes)
    RANKC_CU(cuMemcpyAsync(CUdeviceptr(buffer), CUdeviceptr(staging), bytes,
                           cuda::processStream()));
}

namespace {
// copyAside's stream, and its marks (events) for reuse: a feed's thread
// takes them while the step's thread gives them back.
std::mutex asideMutex;
CUstream asideStream = nullptr;
std::vector<CUevent> freeMarks;
} // namespace

void *copyAside(void *buffer, const void *staging, size_t bytes) {
  CUevent mark = nullptr;
  {
    std::lock_guard<std::mutex> lock(asideMutex);
    if (!asideStream)
      RANKC_CU(cuStreamCreate(&asideStream, CU_STREAM_NON_BLOCKING));
    if (!freeMarks.empty()) {
      mark = freeMarks.back();
      freeMarks.pop_back();
    }
  }
  if (!mark)
    RANKC_CU(cuEventCreate(&mark, CU_EVENT_DISABLE_TIMING));
  if (bytes)
    RANKC_CU(cuMemcpyAsync(CUdeviceptr(buffer), CUdeviceptr(staging), bytes,
                           asideStream));
  RANKC_CU(cuEventRecord(mark, asideStream));
  return mark;
}

void waitCopyAside(void *mark) {
  if (!mark)
    return;
  RANKC_CU(cuStreamWaitEvent(cuda::processStream(), CUevent(mark), 0));
  // (The wait took the event's state: it may be recorded again.)
  std::lock_guard<std::mutex> lock(asideMutex);
  freeMarks.push_back(CUevent(mark));
}

std::string describeBuffers() {
  return std::string("cuda device ") + std::to_string(cuda::driver().device) +
         " (" + cuda::driver().name + "), MPI " +
         (cudaAwareMpi ? "CUDA-aware (device buffers passed directly)"
                       : "staged through pinned host memory");
}

} // namespace rankc::rt
