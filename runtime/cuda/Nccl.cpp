//===- Nccl.cpp - allreduces of device buffers through NCCL ---------------===//
//
// When every rank has a GPU of its own (their device UUIDs, gathered through
// MPI, are distinct), the data-parallel allreduces run in NCCL on a
// communication stream of their own: the stream waits for the gradients'
// kernels (an event), the host never does, and the program's stream waits
// for the result only at the op's wait, so the reduction of one bucket
// overlaps the backward kernels that follow it. NCCL is opened at run time,
// as the driver is: $RANKC_NCCL_LIBRARY, else libnccl.so.2 from the
// loader's path (PyTorch's nvidia-nccl wheel, the toolkit), else the
// toolkit's. Its unique id goes from rank 0 to all through MPI_Bcast.
//
// RANKC_NCCL=0 turns it off (MPI, staged through pinned host memory, does
// the allreduces); RANKC_NCCL=1 requires it, even for a world of one (which
// otherwise needs no collective at all) and with GPUs shared between ranks.
// What NCCL does not reduce as the CPU backend does stays with MPI: f16 and
// bf16 (reduced in f32 there) and means of integers. A mean of floats is
// ncclAvg: exactly sum / n when n is a power of two, within one rounding
// otherwise.
//
//===----------------------------------------------------------------------===//

#include "core/Buffers.h"
#include "core/Core.h"
#include "core/Session.h"
#include "cuda/CudaDriver.h"
#include "rankc_runtime.h"

#include <mpi.h>
#include <nccl.h>

#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <vector>

namespace rankc::rt {

namespace {

#define RANKC_NCCL_FUNCTIONS(X)                                                \
  X(ncclGetVersion) X(ncclGetUniqueId) X(ncclCommInitRank) X(ncclAllReduce)    \
  X(ncclCommDestroy) X(ncclGetErrorString)

struct Nccl {
#define RANKC_NCCL_MEMBER(name) decltype(&::name) name = nullptr;
  RANKC_NCCL_FUNCTIONS(RANKC_NCCL_MEMBER)
#undef RANKC_NCCL_MEMBER
  ncclComm_t comm = nullptr;
  CUstream stream = nullptr;
  int version = 0;
};

Nccl *nccl = nullptr;        // set when NCCL runs the allreduces
std::string why = "not tried"; // why not, for --stats

/// libnccl's functions, or null with `why` set.
Nccl *open(std::string &why) {
  static Nccl n;
  void *h = nullptr;
  std::string tried;
  const char *env = std::getenv("RANKC_NCCL_LIBRARY");
  for (const char *c : {env ? env : "", "libnccl.so.2",
                        "/usr/local/cuda/lib64/libnccl.so.2"}) {
    if (!*c)
      continue;
    if ((h = dlopen(c, RTLD_NOW | RTLD_LOCAL)))
      break;
    tried += (tried.empty() ? "" : "; ") + std::string(dlerror());
  }
  if (!h) {
    why = "no NCCL library (" + tried + ")";
    return nullptr;
  }
#define RANKC_NCCL_LOAD(name)                                                  \
  n.name = reinterpret_cast<decltype(n.name)>(dlsym(h, #name));                \
  if (!n.name) {                                                               \
    why = std::string("the NCCL library lacks ") + #name;                      \
    return nullptr;                                                            \
  }
  RANKC_NCCL_FUNCTIONS(RANKC_NCCL_LOAD)
#undef RANKC_NCCL_LOAD
  return &n;
}

void check(Nccl &n, ncclResult_t r, const char *call) {
  if (r != ncclSuccess)
    fail("NCCL: %s failed: %s", call, n.ncclGetErrorString(r));
}

/// True when no two ranks share a GPU (every UUID differs).
bool ownGpus() {
  CUuuid mine;
  RANKC_CU(cuDeviceGetUuid(&mine, cuda::driver().device));
  std::vector<CUuuid> all(session().worldSize);
  checkMpi(MPI_Allgather(&mine, sizeof mine, MPI_BYTE, all.data(), sizeof mine,
                         MPI_BYTE, session().comm),
           "MPI_Allgather (GPU ids)");
  for (int i = 0; i < session().worldSize; ++i)
    for (int j = 0; j < i; ++j)
      if (std::memcmp(&all[i], &all[j], sizeof mine) == 0)
        return false;
  return true;
}

bool ncclType(int dtype, int reduce, ncclDataType_t &type, ncclRedOp_t &op) {
  switch (dtype) {
  case RANKC_F32: type = ncclFloat32; break;
  case RANKC_F64: type = ncclFloat64; break;
  case RANKC_I8: type = ncclInt8; break;
  case RANKC_I32: type = ncclInt32; break;
  case RANKC_I64: type = ncclInt64; break;
  case RANKC_U8: type = ncclUint8; break;
  case RANKC_U32: type = ncclUint32; break;
  case RANKC_BOOL: // 0 or 1: or is max, and is min
    type = ncclUint8;
    op = reduce == RANKC_MIN || reduce == RANKC_PROD ? ncclMin : ncclMax;
    return true;
  default: return false; // f16/bf16 reduce in f32, u16 as it is, under MPI
  }
  bool floating = dtype == RANKC_F32 || dtype == RANKC_F64;
  switch (reduce) {
  case RANKC_SUM: op = ncclSum; return true;
  case RANKC_PROD: op = ncclProd; return true;
  case RANKC_MAX: op = ncclMax; return true;
  case RANKC_MIN: op = ncclMin; return true;
  case RANKC_MEAN: op = ncclAvg; return floating;
  default: return false;
  }
}

} // namespace

void initDeviceCollectives() {
  const char *env = std::getenv("RANKC_NCCL");
  bool off = env && std::strcmp(env, "0") == 0;
  bool required = env && std::strcmp(env, "1") == 0;
  // Every rank decides alike (the UUID check is collective).
  if (off) {
    why = "RANKC_NCCL=0";
    return;
  }
  if (session().worldSize == 1 && !required) {
    why = "a world of one";
    return;
  }
  bool own = ownGpus();
  if (!own && !required) {
    why = "ranks share a GPU";
    return;
  }
  Nccl *n = open(why);
  // All ranks must agree before NCCL's collective init (or it would hang).
  int ok = n != nullptr, all = 0;
  checkMpi(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, session().comm),
           "MPI_Allreduce (NCCL found)");
  if (!all) {
    if (n)
      why = "NCCL is missing on another rank";
    if (required)
      fail("RANKC_NCCL=1 but NCCL cannot run: %s", why.c_str());
    return;
  }
  check(*n, n->ncclGetVersion(&n->version), "ncclGetVersion");
  ncclUniqueId id;
  if (session().rank == 0)
    check(*n, n->ncclGetUniqueId(&id), "ncclGetUniqueId");
  checkMpi(MPI_Bcast(&id, sizeof id, MPI_BYTE, 0, session().comm),
           "MPI_Bcast (NCCL id)");
  cuda::driver(); // NCCL uses the context current on this thread
  check(*n, n->ncclCommInitRank(&n->comm, session().worldSize, id, session().rank),
        "ncclCommInitRank");
  RANKC_CU(cuStreamCreate(&n->stream, CU_STREAM_NON_BLOCKING));
  nccl = n;
}

void finalizeDeviceCollectives() {
  if (!nccl)
    return;
  RANKC_CU(cuStreamSynchronize(nccl->stream));
  check(*nccl, nccl->ncclCommDestroy(nccl->comm), "ncclCommDestroy");
  RANKC_CU(cuStreamDestroy(nccl->stream));
  nccl = nullptr;
}

void *startDeviceAllreduce(const void *in, void *out, int64_t count,
                           int dtype, int reduce) {
  ncclDataType_t type;
  ncclRedOp_t op;
  if (!nccl || !ncclType(dtype, reduce, type, op))
    return nullptr;
  CUstream work = cuda::processStream();
  CUevent ready, done;
  RANKC_CU(cuEventCreate(&ready, CU_EVENT_DISABLE_TIMING));
  RANKC_CU(cuEventCreate(&done, CU_EVENT_DISABLE_TIMING));
  // The gradients are ready when the kernels queued so far have run.
  RANKC_CU(cuEventRecord(ready, work));
  RANKC_CU(cuStreamWaitEvent(nccl->stream, ready, 0));
  check(*nccl,
        nccl->ncclAllReduce(in, out, size_t(count), type, op, nccl->comm,
                            reinterpret_cast<cudaStream_t>(nccl->stream)),
        "ncclAllReduce");
  RANKC_CU(cuEventRecord(done, nccl->stream));
  RANKC_CU(cuEventDestroy(ready)); // released once recorded work is done
  return done;
}

void waitDeviceAllreduce(void *done) {
  // The program's stream (not the host) waits: later kernels see the sum.
  CUevent e = static_cast<CUevent>(done);
  RANKC_CU(cuStreamWaitEvent(cuda::processStream(), e, 0));
  RANKC_CU(cuEventDestroy(e));
}

bool deviceCollectivesRun() { return nccl != nullptr; }

std::string describeCollectives() {
  if (nccl) {
    int v = nccl->version;
    return "nccl " + std::to_string(v / 10000) + "." +
           std::to_string(v / 100 % 100) + "." + std::to_string(v % 100) +
           " on a communication stream (f16, bf16 and integer means: mpi)";
  }
  if (session().worldSize == 1)
    return "none: a world of one";
  return "mpi (" + why + ")";
}

} // namespace rankc::rt
