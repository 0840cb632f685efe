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

#include <mpi.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rankc::rt {

struct TensorInfo {
  std::string id;                 // input id, or the first output name
  std::vector<std::string> names; // outputs: every name (none: hidden)
  int dtype = 0;
  std::vector<int64_t> shape;
  bool zero = false;      // optimizer state: zeros before the first step
  bool step = false;      // a `step` leaf: the step number, set each step
  int stateOf = -1;       // inputs: the output carried into it, or -1
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
  size_t bytes() const;
};
/// A message's peer on a process grid (manifest `grid` lines).
struct GridPeer {
  std::vector<int64_t> shape, shift;
  std::vector<bool> periodic;
};
struct EventInfo {
  std::string kind, node, tag;
  GridPeer grid;            // shape empty: not a grid peer
  int fillDtype = -1;       // a receive's value from no peer (manifest `fill`)
  double fillFloat = 0;
  int64_t fillInt = 0;
};
/// Fills `bytes` of a receive's buffer with its event's `fill` (no peer).
void fillBuffer(void *buffer, size_t bytes, const EventInfo &e);
struct TraceEvent {
  std::string name, category;
  double begin, end;
};
/// Where one step's time went (seconds).
struct StepTimes {
  double wall = 0, compute = 0, blocked = 0;
};

/// An error the caller can recover from (a bad argument, the wrong rank or
/// world size): the C API of `--emit lib` returns it as text; executables
/// print it and end the job (fail()). Failed MPI operations are not these.
struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};
/// splitmix64: the generator of launch's reproducible inputs and of
/// --shuffle's permutations (cli.md).
uint64_t splitmix64(uint64_t &state);
/// `path` and its parents, as needed; fails the run if one cannot be made.
void makeFolders(const std::string &path);

[[noreturn]] void raise(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));

extern int rank, worldSize;
/// The runtime's own communicator (a duplicate of MPI_COMM_WORLD): an
/// application that embeds the program keeps MPI_COMM_WORLD's messages and
/// error handler to itself.
extern MPI_Comm comm;
extern std::string programName;
extern std::string fingerprint; // of the DAG the program was compiled from
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

/// What a checkpoint holds (Checkpoint.cpp): the inputs carried from step
/// to step (state, updated parameters, the optimizer's state), by input
/// index; where each is read in the next step; a host value put in its
/// place; and the steps done before this process's first.
std::vector<size_t> carriedInputs();
void *carriedBuffer(size_t input);
void restoreInput(size_t input, const void *host);
void setStepsDone(int64_t steps);

/// Messages.cpp: completes every request still open (the end of a step).
void waitAll();

/// Report.cpp: collective (every rank calls them); rank 0 writes the file.
void writeTrace(const std::string &path);
void writeStats(const std::string &path);

} // namespace rankc::rt

#endif // RANKC_RUNTIME_CORE_H
