//===- Core.h - the runtime's state, shared by its parts --------*- C++ -*-===//
//
// Core.cpp runs steps (manifest, inputs, outputs, state), Messages.cpp the
// MPI requests that generated code starts and waits for, Report.cpp the
// trace and statistics. Internal: programs see rankc_runtime.h (generated
// code) and rankc_core.h (embedders).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_CORE_H
#define RANKC_RUNTIME_CORE_H

#include <cstdint>
#include <string>
#include <vector>

namespace rankc::rt {

struct TensorInfo {
  std::string id;                 // input id, or the first output name
  std::vector<std::string> names; // outputs: every name (none: hidden)
  int dtype = 0;
  std::vector<int64_t> shape;
  bool zero = false;      // optimizer state: zeros before the first step
  int stateOf = -1;       // inputs: the output carried into it, or -1
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t bytes() const;
};
struct EventInfo {
  std::string kind, node, tag;
};
struct TraceEvent {
  std::string name, category;
  double begin, end;
};
/// Where one step's time went (seconds).
struct StepTimes {
  double wall = 0, compute = 0, blocked = 0;
};

extern int rank, worldSize;
extern std::string programName;
extern double timeoutSeconds;
extern bool tracing;
extern std::vector<TensorInfo> inputs, outputs;
extern std::vector<EventInfo> events;
extern std::vector<TraceEvent> trace;
extern std::vector<StepTimes> stepTimes; // one per step run
extern StepTimes *currentStep;

double now();
void checkMpi(int rc, const char *what);
std::string describe(int event, int64_t peer);

/// Messages.cpp: completes every request still open (the end of a step).
void waitAll();

/// Report.cpp: collective (every rank calls them); rank 0 writes the file.
void writeTrace(const std::string &path);
void writeStats(const std::string &path);

} // namespace rankc::rt

#endif // RANKC_RUNTIME_CORE_H
