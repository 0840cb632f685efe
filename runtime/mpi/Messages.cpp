//===- Messages.cpp - the MPI requests that generated code starts ---------===//
//
// Sends, receives and allreduces are started by generated code where the
// schedule put them and completed in rankc_rt_wait, which polls (MPI_Test)
// so that a message that never completes ends the run with a clear message
// instead of a hang. Every MPI call is checked. When MPI cannot take the
// program's buffers (GPU memory and an MPI that is not CUDA-aware), each
// message is staged through host memory.
//
//===----------------------------------------------------------------------===//

#include "core/Buffers.h"
#include "core/Core.h"
#include "core/Session.h"
#include "tooling/Npy.h"
#include "rankc_runtime.h"

#include <mpi.h>

#include <chrono>
#include <climits>
#include <thread>
#include <type_traits>

using namespace rankc::rt;

namespace {

struct Request {
  MPI_Request mpi = MPI_REQUEST_NULL;
  int event = -1;
  int64_t peer = -1;
  double started = 0;
  // For allreduces of f16/bf16 (reduced as f32) and mean: what to do after.
  std::vector<float> wideIn, wideOut;
  void *out = nullptr;
  int64_t count = 0;
  int dtype = RANKC_F32;
  int reduce = RANKC_SUM;
  bool active = false;
  // Staging in host memory, when MPI cannot take the program's buffers.
  void *staging = nullptr, *stagingOut = nullptr;
  void *unstageTo = nullptr; // the program's buffer the result goes to
  size_t bytes = 0;
  // Run by the buffers' own library (NCCL) instead of MPI.
  void *device = nullptr;
};

std::vector<Request> requests;

/// A free slot of the request table, started now for `event` with `peer`.
Request &newRequest(int64_t &handle, int event, int64_t peer) {
  handle = requests.size();
  for (size_t i = 0; i < requests.size(); ++i)
    if (!requests[i].active) {
      handle = i;
      break;
    }
  if (handle == int64_t(requests.size()))
    requests.emplace_back();
  Request &r = requests[handle];
  r = Request();
  r.active = true;
  r.event = event;
  r.peer = peer;
  r.started = now();
  return r;
}

/// MPI counts are ints: larger messages are refused with a clear error.
int messageSize(int64_t bytes, int event) {
  if (bytes > INT32_MAX)
    fail("%s is %lld bytes, more than one MPI message can carry (2^31 - 1)",
         describe(event, -1).c_str(), (long long)bytes);
  return int(bytes);
}

/// The rank a message goes to or comes from: MPI_PROC_NULL past the edge
/// of a grid (rankc_runtime.h's rankc_peer_kind).
int64_t resolvePeer(int64_t peer, int32_t kind, int event) {
  if (kind == RANKC_PEER_OFFSET)
    return (((peer % session().worldSize) + session().worldSize) + session().rank) % session().worldSize;
  if (kind != RANKC_PEER_GRID)
    return peer;
  // Row-major coordinates, moved by the shift (ProcessGrid.h's rule).
  const GridPeer &g = session().events().at(event).grid;
  int64_t at = 0, rest = session().rank, stride = 1;
  for (size_t i = g.shape.size(); i-- > 0;) {
    int64_t p = g.shape[i], c = rest % p + g.shift[i];
    rest /= p;
    if (c < 0 || c >= p) {
      if (!g.periodic[i])
        return MPI_PROC_NULL;
      c = (c % p + p) % p;
    }
    at += c * stride;
    stride *= p;
  }
  return at;
}

MPI_Op mpiOp(int reduce, int dtype) {
  if (dtype == RANKC_BOOL)
    return reduce == RANKC_MIN ? MPI_LAND : MPI_LOR;
  switch (reduce) {
  case RANKC_PROD: return MPI_PROD;
  case RANKC_MAX: return MPI_MAX;
  case RANKC_MIN: return MPI_MIN;
  default: return MPI_SUM;
  }
}

MPI_Datatype mpiType(int dtype) {
  switch (dtype) {
  case RANKC_BOOL: return MPI_C_BOOL;
  case RANKC_I8: return MPI_INT8_T;
  case RANKC_I32: return MPI_INT32_T;
  case RANKC_I64: return MPI_INT64_T;
  case RANKC_U8: return MPI_UINT8_T;
  case RANKC_U16: return MPI_UINT16_T;
  case RANKC_U32: return MPI_UINT32_T;
  case RANKC_F64: return MPI_DOUBLE;
  default: return MPI_FLOAT; // f32, and f16/bf16 widened to f32
  }
}

/// A send or receive of `bytes` at `data` started now. When MPI cannot take
/// the program's buffers, a send goes from a host copy and a receive lands
/// in one that rankc_rt_wait copies back.
int64_t startMessage(bool send, int64_t data, int64_t bytes, int64_t peer,
                     int32_t relative, int32_t mpiTag, int32_t event) {
  int64_t handle;
  Request &r = newRequest(handle, event, resolvePeer(peer, relative, event));
  void *buffer = reinterpret_cast<void *>(data);
  if (r.peer == MPI_PROC_NULL) {
    // No peer (a grid's edge): a send does nothing, a receive is its fill.
    if (!send)
      fillBuffer(buffer, bytes, session().events().at(event));
    return handle; // r.mpi is MPI_REQUEST_NULL: done
  }
  if (rankc::rt::mpiTakesBuffers()) {
    rankc::rt::synchronizeBuffers(); // MPI reads or writes it from now on
  } else {
    r.staging = rankc::rt::allocStaging(bytes);
    if (send) {
      rankc::rt::copyToHost(r.staging, buffer, bytes);
    } else {
      r.unstageTo = buffer;
      r.bytes = bytes;
    }
    buffer = r.staging;
  }
  int count = messageSize(bytes, event);
  int peerRank = int(r.peer);
  checkMpi(send ? MPI_Isend(buffer, count, MPI_BYTE, peerRank, mpiTag,
                            session().comm, &r.mpi)
                : MPI_Irecv(buffer, count, MPI_BYTE, peerRank, mpiTag,
                            session().comm, &r.mpi),
           ((send ? "MPI_Isend of " : "MPI_Irecv of ") +
            describe(event, r.peer))
               .c_str());
  return handle;
}

} // namespace

namespace rankc::rt {
void progressCommunication() {
  // One test drives MPICH's progress engine for every request; which one
  // completes first does not matter (rankc_rt_wait tests its own again).
  for (Request &r : requests)
    if (r.active && r.mpi != MPI_REQUEST_NULL) {
      int done = 0;
      checkMpi(MPI_Test(&r.mpi, &done, MPI_STATUS_IGNORE),
               ("MPI_Test of " + describe(r.event, r.peer)).c_str());
      return;
    }
}

void waitAll() {
  for (size_t i = 0; i < requests.size(); ++i)
    if (requests[i].active)
      rankc_rt_wait(i);
}
} // namespace rankc::rt

extern "C" {

int64_t rankc_rt_isend(int64_t data, int64_t bytes, int64_t peer,
                       int32_t relative, int32_t mpiTag, int32_t event) {
  return startMessage(/*send=*/true, data, bytes, peer, relative, mpiTag,
                      event);
}

int64_t rankc_rt_irecv(int64_t data, int64_t bytes, int64_t peer,
                       int32_t relative, int32_t mpiTag, int32_t event) {
  return startMessage(/*send=*/false, data, bytes, peer, relative, mpiTag,
                      event);
}

int64_t rankc_rt_iallreduce(int64_t in, int64_t out, int64_t count,
                            int32_t dtype, int32_t reduce, int32_t event) {
  int64_t handle;
  Request &r = newRequest(handle, event, -1);
  r.out = reinterpret_cast<void *>(out);
  r.count = count;
  r.dtype = dtype;
  r.reduce = reduce;
  const void *send = reinterpret_cast<const void *>(in);
  void *recv = r.out;
  if ((r.device = rankc::rt::startDeviceAllreduce(send, recv, count, dtype,
                                                  reduce))) {
    r.out = nullptr; // NCCL's result is final: nothing to divide or unstage
    return handle;
  }
  if (session().worldSize == 1) {
    // A world of one: the sum, mean, min or max of one value is the value
    // (exactly, in every type). No MPI call, no staging, no host division:
    // on a GPU the step's gradients stay where they are.
    if (send != recv)
      rankc::rt::copyBuffer(recv, send, count * npy::elementBytes(dtype));
    r.out = nullptr; // nothing for rankc_rt_wait to finish
    return handle;   // r.mpi is MPI_REQUEST_NULL: MPI_Test says done
  }
  if (rankc::rt::buffersOnDevice()) {
    // Reduced on the host: the mean's division and f16/bf16 widening need
    // the values there, and a reduction moves every byte once anyway.
    size_t bytes = count * npy::elementBytes(dtype);
    r.staging = rankc::rt::allocStaging(bytes);
    r.stagingOut = rankc::rt::allocStaging(bytes);
    rankc::rt::copyToHost(r.staging, send, bytes);
    r.unstageTo = r.out;
    r.bytes = bytes;
    send = r.staging;
    recv = r.out = r.stagingOut;
  }
  if (dtype == RANKC_F16 || dtype == RANKC_BF16) {
    r.wideIn.resize(count);
    r.wideOut.resize(count);
    for (int64_t i = 0; i < count; ++i)
      r.wideIn[i] = float(npy::loadElement(dtype, send, i));
    send = r.wideIn.data();
    recv = r.wideOut.data();
  }
  if (count > INT32_MAX)
    fail("%s has %lld elements, more than one MPI call can carry",
         describe(event, -1).c_str(), (long long)count);
  checkMpi(MPI_Iallreduce(send, recv, int(count), mpiType(dtype),
                          mpiOp(reduce, dtype), session().comm, &r.mpi),
           ("MPI_Iallreduce of " + describe(event, -1)).c_str());
  return handle;
}

void rankc_rt_wait(int64_t handle) {
  Request &r = requests.at(handle);
  if (r.device) { // NCCL: the program's stream waits, not the host
    rankc::rt::waitDeviceAllreduce(r.device);
    r.device = nullptr;
    if (session().tracing && r.event >= 0)
      session().trace.push_back({describe(r.event, r.peer), session().events()[r.event].kind,
                       r.started, now()});
    r.active = false;
    return;
  }
  // Poll, so that a message that never completes ends the run with a clear
  // message instead of a hang.
  double deadline = now() + session().timeoutSeconds;
  int done = 0;
  double blockedFrom = now();
  for (unsigned spins = 0;; ++spins) {
    checkMpi(MPI_Test(&r.mpi, &done, MPI_STATUS_IGNORE),
             ("MPI_Test of " + describe(r.event, r.peer)).c_str());
    if (done)
      break;
    if (now() > deadline)
      fail("timed out after %.0f s waiting for %s", session().timeoutSeconds,
           describe(r.event, r.peer).c_str());
    if (spins > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  double completed = now(), waited = completed - blockedFrom;
  if (session().currentStep) {
    session().currentStep->blocked += waited;
    // A bucket's reduction, for --stats beside the model's prediction.
    if (r.event >= 0 && session().events()[r.event].bucket >= 0) {
      BucketTimes &b = session().bucketTimes[r.event];
      b.start += r.started - session().stepBegin;
      b.end += completed - session().stepBegin;
      b.exposed += waited;
      ++b.steps;
    }
  }
  // The mean of f32 and f64 in their own type, as DDP's bucket.div_(world
  // size) computes it (a tight loop: it runs over every gradient each step).
  auto divide = [&](auto *p) {
    using T = std::remove_pointer_t<decltype(p)>;
    const T n = T(session().worldSize);
    for (int64_t i = 0; i < r.count; ++i)
      p[i] /= n;
  };
  if (r.out && r.reduce == RANKC_MEAN && r.dtype == RANKC_F32)
    divide(static_cast<float *>(r.out));
  else if (r.out && r.reduce == RANKC_MEAN && r.dtype == RANKC_F64)
    divide(static_cast<double *>(r.out));
  else if (r.out && (r.dtype == RANKC_F16 || r.dtype == RANKC_BF16 ||
                     r.reduce == RANKC_MEAN)) {
    for (int64_t i = 0; i < r.count; ++i) {
      double v = r.wideOut.empty() ? npy::loadElement(r.dtype, r.out, i)
                                   : r.wideOut[i];
      if (r.reduce == RANKC_MEAN)
        v /= session().worldSize;
      npy::storeElement(r.dtype, r.out, i, v, int64_t(v), v != 0);
    }
  }
  // Staged: the result goes to the program's buffer, the staging is freed.
  if (r.unstageTo)
    rankc::rt::copyFromHost(r.unstageTo, r.stagingOut ? r.stagingOut : r.staging,
                            r.bytes);
  rankc::rt::freeStaging(r.staging);
  rankc::rt::freeStaging(r.stagingOut);
  r.staging = r.stagingOut = r.unstageTo = nullptr;
  if (session().tracing && r.event >= 0)
    session().trace.push_back({describe(r.event, r.peer), session().events()[r.event].kind,
                     r.started, now()});
  r.active = false;
}

} // extern "C"
