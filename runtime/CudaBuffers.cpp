//===- CudaBuffers.cpp - the CUDA runtime's buffers: device memory --------===//
//
// Generated code allocates its buffers with cuMemAlloc (mgpuMemAlloc). MPI
// gets them directly when the library says it is CUDA-aware
// (MPIX_Query_cuda_support); otherwise, as with Debian's MPICH, messages are
// staged through pinned host buffers, which copy at full PCIe speed.
// RANKC_CUDA_AWARE_MPI=0 forces staging.
//
//===----------------------------------------------------------------------===//

#include "Buffers.h"
#include "CudaDriver.h"

#include <mpi.h>

#include <cstdlib>
#include <cstring>

namespace rankc::rt {

namespace {
bool cudaAwareMpi = false;
} // namespace

void initBuffers(int) {
  cuda::driver();
  cudaAwareMpi = MPIX_Query_cuda_support() == 1;
  if (const char *v = std::getenv("RANKC_CUDA_AWARE_MPI"))
    cudaAwareMpi = cudaAwareMpi && std::strcmp(v, "0") != 0;
}

bool buffersOnDevice() { return true; }
bool mpiTakesBuffers() { return cudaAwareMpi; }

void *allocStaging(size_t bytes) {
  void *p = nullptr;
  RANKC_CU(cuMemAllocHost(&p, bytes ? bytes : 1));
  return p;
}

void freeStaging(void *host) {
  if (host)
    RANKC_CU(cuMemFreeHost(host));
}

void copyToHost(void *host, const void *buffer, size_t bytes) {
  if (bytes)
    RANKC_CU(cuMemcpy(CUdeviceptr(host), CUdeviceptr(buffer), bytes));
}

void copyFromHost(void *buffer, const void *host, size_t bytes) {
  if (bytes)
    RANKC_CU(cuMemcpy(CUdeviceptr(buffer), CUdeviceptr(host), bytes));
}

std::string describeBuffers() {
  return std::string("cuda device ") + std::to_string(cuda::driver().device) +
         " (" + cuda::driver().name + "), MPI " +
         (cudaAwareMpi ? "CUDA-aware (device buffers passed directly)"
                       : "staged through pinned host memory");
}

} // namespace rankc::rt
