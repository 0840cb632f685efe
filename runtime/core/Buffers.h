//===- Buffers.h - where generated code's buffers live ---------*- C++ -*-===//
//
// The runtime is linked in two flavours that differ only here:
//  - rankc_runtime (CPU): buffers are host memory, used in place;
//  - rankc_runtime_cuda: buffers are GPU memory. MPI gets them directly when
//    the MPI library is CUDA-aware; otherwise every message is staged through
//    pinned host memory. Files are always read and written on the host.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_BUFFERS_H
#define RANKC_RUNTIME_BUFFERS_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace rankc::rt {

struct StepArenas;

/// Called once MPI is up: picks the device, detects CUDA-aware MPI.
void initBuffers(int rank);
/// True when generated code's buffers are not host memory.
bool buffersOnDevice();
/// True when MPI may read and write generated code's buffers itself.
bool mpiTakesBuffers();
/// Host memory for staging (pinned for the CUDA runtime, and then kept for
/// reuse: a step stages the same messages every time, and pinning costs
/// more than the copy).
void *allocStaging(size_t bytes);
void freeStaging(void *host);
/// Gives the kept staging blocks back (at finalize; all must be free).
void releaseStaging();
/// Waits until the GPU has done everything queued so far (a no-op on the
/// host). Generated code waits for its kernels only where it calls out; a
/// library call (cuBLASLt) it made last may still run: whatever reads or
/// writes the program's buffers from outside (copies, MPI, the end of a
/// step) waits first.
void synchronizeBuffers();
/// Copies between a generated buffer and host memory (synchronous, after
/// synchronizeBuffers()).
void copyToHost(void *host, const void *buffer, size_t bytes);
void copyFromHost(void *buffer, const void *host, size_t bytes);
/// Copies from staging memory (allocStaging's) into a buffer without
/// waiting: on the GPU an asynchronous copy on the stream the step's kernels
/// run on, so they read the new bytes and the host goes on (a fed row, a
/// `step` leaf: a synchronous copy cost a round trip to the GPU, 8-10 us,
/// every step); made while a step is recorded, it becomes a memcpy node of
/// the recording (StepReplay.h's StagedCopy). `staging` must stay as it is
/// until the next synchronizeBuffers(). The host runtime copies at once.
void copyFromStaging(void *buffer, const void *staging, size_t bytes);
/// Copies from staging memory into a buffer on a stream of its own, from any
/// thread (a feed's thread copies the next step's rows while the step before
/// computes), and returns a mark of it: waitCopyAside(mark) orders the work
/// queued next on the steps' stream after the copy, without the host
/// waiting. The host runtime copies at once and its marks are null.
void *copyAside(void *buffer, const void *staging, size_t bytes);
void waitCopyAside(void *mark);
/// Copies between two generated buffers, ordered after the work queued
/// so far (asynchronous on the GPU's stream).
void copyBuffer(void *dst, const void *src, size_t bytes);
/// Buffers that live as long as the program (inputs, optimizer state), in
/// the memory generated code uses; zeroed.
/// `what` names the buffer in the error that ends the run when the memory
/// is not there ("input 'x'").
void *allocBuffer(size_t bytes, const std::string &what);
void freeBuffer(void *buffer);
/// The arenas that generated code's own allocations come from (Arena.h).
StepArenas &programArenas();
/// Bytes of buffer memory held now (inputs and arenas), for --stats.
size_t bufferBytesHeld();
/// Bytes in use on the GPU (by every process on it), or 0 without one.
size_t deviceBytesInUse();
/// One line for --stats: where the buffers are.
std::string describeBuffers();

/// Choices the backend's libraries made by timing in this process (cuBLASLt
/// algorithms per GEMM shape), as text, and the same given back to a new
/// process before its first step: a resumed run computes the same bits as
/// the run it continues. The host backend has none ("").
std::string libraryChoices();
void restoreLibraryChoices(const std::string &text);

/// --kernel-stats: time every kernel launch (GPU events) and write, per
/// kernel, launches, seconds, grid and block to `path` as JSON. The CPU
/// runtime has no kernels: it writes an empty list.
void enableKernelTiming();
void writeKernelStats(const std::string &path);

/// Allreduces that the buffers' own library runs instead of MPI: NCCL for
/// the CUDA runtime when every rank has a GPU of its own (Nccl.cpp); none
/// for the CPU runtime. init and finalize are collective, once MPI is up
/// and before it goes down.
void initDeviceCollectives();
void finalizeDeviceCollectives();
/// Starts the allreduce of `count` elements from `in` into `out` (device
/// addresses) and returns what waitDeviceAllreduce needs, or null when this
/// one is MPI's (no such library, or a type or operation it does not do).
void *startDeviceAllreduce(const void *in, void *out, int64_t count,
                           int dtype, int reduce);
/// Orders everything the program queues next after that allreduce.
void waitDeviceAllreduce(void *started);
/// One line for --stats: what runs the allreduces, and why.
std::string describeCollectives();

/// True when the buffers' own library runs the allreduces (NCCL).
bool deviceCollectivesRun();

/// Steps recorded once and replayed (CUDA Graphs, CudaGraphs.cpp): one
/// launch for a step's hundreds of kernels and library calls, instead of
/// one host call each. StepReplay.cpp decides when; the host runtime has
/// nothing to replay (stepsReplayable says so).
bool stepsReplayable(std::string &whyNot);
/// Everything queued from now on is recorded, not run.
void beginStepRecording();
/// True between begin and end: the host's waits for the GPU return at once
/// (nothing runs), and a call that cannot be recorded breaks the recording
/// instead of the run.
bool recordingStep();
/// The recorded step, ready to replay, or null (with `whyNot`) when
/// something in it could not be recorded: then none of it ran.
void *endStepRecording(std::string &whyNot);
/// Queues the recorded step (asynchronously, like the calls it replaces).
void replayStep(void *recorded);
void dropStepRecording(void *recorded);

/// Lets MPI move the messages in flight (MPI_Test): called by the CUDA
/// runtime while the host waits for kernels, so that transfers proceed
/// during computation instead of only inside rankc_rt_wait.
void progressCommunication();

/// Prints `error: rank R (program): ...` and ends the whole run: with
/// MPI_Abort once MPI is up, with exit(1) before (e.g. in a constructor).
[[noreturn]] void fail(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

} // namespace rankc::rt

#endif // RANKC_RUNTIME_BUFFERS_H
