//===- CudaDriver.cpp - open libcuda, pick the device, check errors -------===//

#include "cuda/CudaDriver.h"
#include "core/Buffers.h"

#include <cstdlib>
#include <dlfcn.h>
#include <string>

namespace rankc::rt::cuda {

namespace {

#define RANKC_STR(x) #x
#define RANKC_XSTR(x) RANKC_STR(x)

/// This process's index among the ranks of its node, as the launcher says:
/// MPICH's Hydra, Open MPI, Slurm.
int localRank() {
  for (const char *var : {"RANKC_CUDA_DEVICE", "MPI_LOCALRANKID",
                          "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"})
    if (const char *v = std::getenv(var))
      return std::atoi(v);
  return 0;
}

Driver *open() {
  static Driver d;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib)
    fail("no CUDA driver on this machine (libcuda.so.1: %s); this program "
         "was compiled with --target cuda",
         dlerror());
#define RANKC_CUDA_LOAD(name)                                                  \
  d.name = reinterpret_cast<decltype(d.name)>(dlsym(lib, RANKC_XSTR(name)));   \
  if (!d.name)                                                                 \
    fail("the CUDA driver lacks %s", RANKC_XSTR(name));
  RANKC_CUDA_FUNCTIONS(RANKC_CUDA_LOAD)
#undef RANKC_CUDA_LOAD
  check(d.cuInit(0), "cuInit");
  int count = 0;
  check(d.cuDeviceGetCount(&count), "cuDeviceGetCount");
  if (count == 0)
    fail("the CUDA driver sees no GPU");
  check(d.cuDeviceGet(&d.device, localRank() % count), "cuDeviceGet");
  check(d.cuDeviceGetName(d.name, sizeof d.name - 1, d.device),
        "cuDeviceGetName");
  check(d.cuDevicePrimaryCtxRetain(&d.context, d.device),
        "cuDevicePrimaryCtxRetain");
  return &d;
}

} // namespace

Driver &driver() {
  static Driver *d = open();
  // Each thread that calls the driver needs the context current.
  thread_local bool current = false;
  if (!current) {
    check(d->cuCtxSetCurrent(d->context), "cuCtxSetCurrent");
    current = true;
  }
  return *d;
}

void check(CUresult result, const char *call) {
  if (result == CUDA_SUCCESS)
    return;
  const char *name = "unknown error";
  // cuGetErrorName may be called before driver() finished opening.
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (lib)
    if (auto get = reinterpret_cast<CUresult (*)(CUresult, const char **)>(
            dlsym(lib, "cuGetErrorName")))
      get(result, &name);
  if (absorbedByRecording(result, call, name))
    return;
  fail("CUDA: %s failed: %s", call, name);
}

} // namespace rankc::rt::cuda
