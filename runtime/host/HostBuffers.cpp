//===- HostBuffers.cpp - the CPU runtime's buffers: host memory -----------===//

#include "core/Arena.h"
#include "core/Buffers.h"
#include "core/Core.h"
#include "core/Session.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rankc::rt {

namespace {
size_t held = 0; // by allocBuffer
void copyHost(void *dst, const void *src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}
} // namespace

void initBuffers(int) {}
bool buffersOnDevice() { return false; }
bool mpiTakesBuffers() { return true; }
void synchronizeBuffers() {}
void *allocStaging(size_t bytes) { return std::malloc(bytes ? bytes : 1); }
void freeStaging(void *host) { std::free(host); }
void releaseStaging() {}
// Host buffers: MPI reduces them in place, nothing else is needed.
void initDeviceCollectives() {}
void finalizeDeviceCollectives() {}
void *startDeviceAllreduce(const void *, void *, int64_t, int, int) {
  return nullptr;
}
void waitDeviceAllreduce(void *) {}
std::string describeCollectives() {
  return session().worldSize == 1 ? "none: a world of one" : "mpi";
}
bool deviceCollectivesRun() { return false; }
// Generated host code is its own fastest replay.
// The host's GEMMs choose nothing at run time.
std::string libraryChoices() { return ""; }
void restoreLibraryChoices(const std::string &) {}

bool stepsReplayable(std::string &whyNot) {
  whyNot = "host code: nothing to record";
  return false;
}
void beginStepRecording() {}
bool recordingStep() { return false; }
void *endStepRecording(std::string &whyNot) {
  whyNot = "host code: nothing to record";
  return nullptr;
}
void replayStep(void *) {}
void dropStepRecording(void *) {}
void copyBuffer(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memmove(dst, src, bytes);
}
void copyToHost(void *host, const void *buffer, size_t bytes) {
  if (bytes)
    std::memcpy(host, buffer, bytes);
}
void copyFromHost(void *buffer, const void *host, size_t bytes) {
  if (bytes)
    std::memcpy(buffer, host, bytes);
}
void copyFromStaging(void *buffer, const void *staging, size_t bytes) {
  copyFromHost(buffer, staging, bytes);
}
void *copyAside(void *buffer, const void *staging, size_t bytes) {
  copyFromHost(buffer, staging, bytes);
  return nullptr;
}
void waitCopyAside(void *) {}
void *allocBuffer(size_t bytes, const std::string &what) {
  // 64-byte aligned, as bufferization aligns its own allocations.
  void *p = std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
  if (!p)
    fail("out of memory: could not allocate %zu bytes for %s", bytes,
         what.c_str());
  std::memset(p, 0, bytes);
  held += bytes;
  return p;
}
void freeBuffer(void *buffer) { std::free(buffer); }
StepArenas &programArenas() {
  static StepArenas arenas(std::malloc, std::free, copyHost);
  return arenas;
}
size_t bufferBytesHeld() {
  StepArenas &a = programArenas();
  return held + a.arenas[0].reserved() + a.arenas[1].reserved();
}
size_t deviceBytesInUse() { return 0; }
std::string describeBuffers() { return "host"; }

void enableKernelTiming() {}
void writeKernelStats(const std::string &path) {
  if (FILE *f = std::fopen(path.c_str(), "w")) {
    std::fputs("{\"kernels\": []}\n", f);
    std::fclose(f);
  }
}

} // namespace rankc::rt

// finalize-memref-to-llvm (use-generic-functions) lowers the CPU program's
// memref.alloc to these: every buffer of a step comes from the step's arena.
// Nothing is freed one by one (the program never deallocates): arenas are
// reset between steps.
extern "C" void *_mlir_memref_to_llvm_alloc(size_t bytes) {
  return rankc::rt::programArenas().now().allocate(bytes);
}
extern "C" void *_mlir_memref_to_llvm_aligned_alloc(size_t alignment,
                                                    size_t bytes) {
  if (alignment > 256)
    rankc::rt::fail("an allocation asks for %zu-byte alignment (at most 256)",
                    alignment);
  return rankc::rt::programArenas().now().allocate(bytes);
}
extern "C" void _mlir_memref_to_llvm_free(void *) {}
