//===- CudaDriver.h - the CUDA driver API, loaded at run time --*- C++ -*-===//
//
// The driver (libcuda.so.1) comes with the GPU's kernel module, not with the
// toolkit: it is opened when the program first needs the GPU, so that a
// machine without one gets a clear error instead of a loader failure, and
// the executables build on machines without a driver.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_CUDADRIVER_H
#define RANKC_RUNTIME_CUDADRIVER_H

#include <cuda.h>

namespace rankc::rt::cuda {

// Every driver entry point we call. The names go through cuda.h's macros,
// so the versioned symbol (cuMemAlloc_v2, ...) is the one looked up.
#define RANKC_CUDA_FUNCTIONS(X)                                                \
  X(cuInit) X(cuGetErrorName) X(cuDeviceGetCount) X(cuDeviceGet)               \
  X(cuDeviceGetName) X(cuDevicePrimaryCtxRetain) X(cuCtxSetCurrent)            \
  X(cuModuleLoadData) X(cuModuleLoadDataEx) X(cuModuleUnload)                  \
  X(cuModuleGetFunction) X(cuLaunchKernel) X(cuStreamCreate)                   \
  X(cuStreamDestroy) X(cuStreamSynchronize) X(cuStreamWaitEvent)               \
  X(cuEventCreate) X(cuEventDestroy) X(cuEventSynchronize) X(cuEventRecord)    \
  X(cuMemAlloc) X(cuMemAllocManaged) X(cuMemFree) X(cuMemAllocHost)            \
  X(cuMemFreeHost) X(cuMemcpy) X(cuMemcpyAsync) X(cuMemsetD32Async)            \
  X(cuMemsetD16Async) X(cuMemsetD8Async) X(cuMemGetInfo)                       \
  X(cuCtxSynchronize) X(cuEventElapsedTime) X(cuStreamQuery)                   \
  X(cuDeviceGetUuid) X(cuStreamBeginCapture) X(cuStreamEndCapture)            \
  X(cuGraphInstantiate) X(cuGraphLaunch) X(cuGraphExecDestroy)                 \
  X(cuGraphDestroy)

struct Driver {
#define RANKC_CUDA_MEMBER(name) decltype(&::name) name = nullptr;
  RANKC_CUDA_FUNCTIONS(RANKC_CUDA_MEMBER)
#undef RANKC_CUDA_MEMBER
  CUdevice device = 0;
  CUcontext context = nullptr;
  char name[128] = {0};
};

/// The driver, opened and the device's primary context made current on the
/// calling thread (first call: cuInit, device from $RANKC_CUDA_DEVICE or the
/// MPI launcher's local rank, modulo the number of devices).
Driver &driver();

/// Fails the run with the call's name and the driver's error name.
void check(CUresult result, const char *call);

/// While a step is recorded (CudaGraphs.cpp), a failed call breaks the
/// recording instead of the run: true when it took the error.
bool absorbedByRecording(CUresult result, const char *call, const char *name);

/// The one stream that every kernel, copy and library call of the process
/// goes on (MgpuWrappers.cpp).
CUstream processStream();

} // namespace rankc::rt::cuda

#define RANKC_CU(call)                                                         \
  ::rankc::rt::cuda::check(::rankc::rt::cuda::driver().call, #call)

#endif // RANKC_RUNTIME_CUDADRIVER_H
