//===- CudaGraphs.cpp - a step recorded once, replayed as one launch -----===//
//
// A training step is a few hundred kernels and cuBLASLt calls, many of them
// a few microseconds long: launched one by one, the host cannot keep the
// GPU busy. Stream capture records them (and the copies and memsets around
// them) from the process stream into a graph, which replays with a single
// cuGraphLaunch. StepReplay.cpp decides when a recording may be replayed.
//
// While recording, nothing runs: the host's waits for the stream
// (mgpuStreamSynchronize) return at once, and a driver call that capture
// forbids (a synchronous copy, an event wait) breaks the recording rather
// than failing the run: check() hands its error here, the capture ends
// invalid, and the step runs as before.
//
// RANKC_CUDA_GRAPHS=0 turns replay off.
//
//===----------------------------------------------------------------------===//

#include "core/Buffers.h"
#include "cuda/CudaDriver.h"
#include "tooling/KernelStats.h"

#include <cstdlib>
#include <cstring>
#include <string>

namespace rankc::rt {

namespace {
bool recording = false;
std::string brokenBy; // the first call that capture refused
} // namespace

namespace cuda {
bool absorbedByRecording(CUresult result, const char *call, const char *name) {
  if (!recording)
    return false;
  if (brokenBy.empty())
    brokenBy = std::string(call) + " failed: " + name;
  return true;
}
} // namespace cuda

bool stepsReplayable(std::string &whyNot) {
  if (const char *v = std::getenv("RANKC_CUDA_GRAPHS"); v && !std::strcmp(v, "0")) {
    whyNot = "RANKC_CUDA_GRAPHS=0";
    return false;
  }
  if (kernels::timing()) {
    whyNot = "--kernel-stats times every launch";
    return false;
  }
  return true;
}

void beginStepRecording() {
  brokenBy.clear();
  // Relaxed: the arena may still ask the driver for memory meanwhile.
  RANKC_CU(cuStreamBeginCapture(cuda::processStream(),
                                CU_STREAM_CAPTURE_MODE_RELAXED));
  recording = true;
}

bool recordingStep() { return recording; }

void *endStepRecording(std::string &whyNot) {
  CUgraph graph = nullptr;
  CUresult ended = cuda::driver().cuStreamEndCapture(cuda::processStream(),
                                                     &graph);
  recording = false;
  if (!brokenBy.empty() || ended != CUDA_SUCCESS || !graph) {
    whyNot = !brokenBy.empty() ? brokenBy : "cuStreamEndCapture failed";
    if (graph)
      RANKC_CU(cuGraphDestroy(graph));
    return nullptr;
  }
  CUgraphExec exec = nullptr;
  CUresult made = cuda::driver().cuGraphInstantiate(&exec, graph, 0);
  RANKC_CU(cuGraphDestroy(graph));
  if (made != CUDA_SUCCESS) {
    whyNot = "cuGraphInstantiate failed";
    return nullptr;
  }
  return exec;
}

void replayStep(void *recorded) {
  RANKC_CU(cuGraphLaunch(static_cast<CUgraphExec>(recorded),
                         cuda::processStream()));
}

// A replay still in flight is freed when it completes.
void dropStepRecording(void *recorded) {
  RANKC_CU(cuGraphExecDestroy(static_cast<CUgraphExec>(recorded)));
}

} // namespace rankc::rt
