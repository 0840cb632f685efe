//===- Session.h - a rank's run of a compiled program -----------*- C++ -*-===//
//
// Everything a process holds of its run, in one object: the MPI
// communicator, the program's manifest, the buffers of its inputs and where
// its outputs are, the values carried from one step to the next, the step
// count, the times of its steps. A process runs one rank of one program,
// so there is one session (session()); its clients are thin:
//   - the executables' main() (Main.cpp): a command line, .npy files, feeds,
//     checkpoints, around init / setInput / step / getOutput;
//   - the C API of `--emit lib` and embedders (rankc_core.h, Library.cpp);
//   - the generated code, through rankc_runtime.h's rankc_rt_* entry points
//     (CoreApi.cpp), and the runtime's own parts (messages, reports).
// A checkpoint is one walk over carried() (Checkpoint.cpp): state inputs,
// updated parameters, the optimizer's state and step count, accumulated
// gradients; with the step number, from which the feeds' rows, the `step`
// leaf and the accumulation window follow.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_SESSION_H
#define RANKC_RUNTIME_SESSION_H

#include "core/Manifest.h"
#include "core/StepReplay.h"

#include <mpi.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace rankc::rt {

struct TraceEvent {
  std::string name, category;
  double begin, end;
};
/// Where one step's time went (seconds).
struct StepTimes {
  double wall = 0, compute = 0, blocked = 0;
};
/// A DDP bucket's reduction as measured, summed over the steps that ran it
/// (seconds into each step): its start, its wait's end, and the time the
/// wait blocked (what the step paid for it).
struct BucketTimes {
  double start = 0, end = 0, exposed = 0;
  int64_t steps = 0;
};

class Session {
public:
  // The run: this rank in the runtime's own communicator (a duplicate of
  // MPI_COMM_WORLD, so that an application embedding the program keeps
  // MPI_COMM_WORLD's messages and error handler to itself).
  int rank = 0, worldSize = 1;
  MPI_Comm comm = MPI_COMM_NULL;
  Manifest program;
  double timeoutSeconds = 300; // every wait for a message
  bool tracing = false;
  std::vector<TraceEvent> trace;
  std::vector<StepTimes> stepTimes; // one per step this process ran
  StepTimes *currentStep = nullptr; // while a step runs
  double stepBegin = 0;              // when it began (now())
  std::map<int, BucketTimes> bucketTimes; // by event (--stats)
  // Device memory in use (--stats): once the context, MPI and the
  // collectives' library are up, before any buffer; and after the first
  // step (buffers, libraries' workspaces, a recorded step's graph).
  size_t deviceBytesAtStart = 0, deviceBytesAfterFirstStep = 0;

  /// Initializes MPI unless the caller did, reads the manifest, checks the
  /// world size and rank against it, allocates the inputs (optimizer state:
  /// zeros). An Error (nothing allocated) if this rank cannot run it.
  void start(int *argc, char ***argv, double timeout);
  /// Frees every buffer; finalizes MPI only if start() initialized it.
  void finish();

  /// The inputs a caller supplies (optimizer state and `step` leaves are
  /// the session's own) and the outputs it can read (hidden optimizer state
  /// excluded): rankc_core.h's indices, into program.inputs / outputs.
  const std::vector<int> &visibleInputs() const { return visibleIns; }
  const std::vector<int> &visibleOutputs() const { return visibleOuts; }

  /// Copies a host value into input `index`, read by the next step (a
  /// carried input takes it instead of the value carried).
  void setInput(size_t index, const void *host);
  /// Staging memory of input `index`'s size (pinned on the GPU; two slots,
  /// so one can be filled while the other is copied from), the session's
  /// until finish().
  void *inputStaging(size_t index, int slot);
  /// Input `index` reads what inputStaging(index, slot) holds in the next
  /// step, copied as that step's first work (inside its CUDA-graph
  /// recording: no API call of its own, no round trip to the GPU): the slot
  /// must not change until that step is done.
  void setInputStaged(size_t index, int slot);
  /// Input `index`'s buffer for steps of parity `parity`: its own for 0, a
  /// second one for 1 (made on the first call; the session's until
  /// finish()). A feed copies the next step's row into the other while a
  /// step reads one.
  void *inputBufferOf(size_t index, int parity);
  /// Input `index` reads `buffer` (one of inputBufferOf's) in the next step.
  void useInputBuffer(size_t index, void *buffer) {
    dropStaged(index);
    current.at(index) = buffer;
  }
  /// One step: the update step's program or a micro-step's, every message
  /// completed, then the carried values moved into next step's inputs.
  void step();
  /// Copies output `index` of the last step to the host.
  void getOutput(size_t index, void *host) const;
  /// Steps done, counted from step 0 across a resume.
  int64_t stepsDone() const { return int64_t(stepTimes.size()) + stepOffset; }

  /// What a checkpoint holds: the inputs carried from step to step, where
  /// each is read in the next step, a host value put in its place, and the
  /// steps done before this process's first.
  std::vector<size_t> carried() const;
  const void *carriedValue(size_t input) const { return current.at(input); }
  void restore(size_t input, const void *host) { setInput(input, host); }
  void setStepsDone(int64_t steps) {
    // (Steps this process ran keep their arenas' and recordings' count.)
    stepOffset = steps - int64_t(stepTimes.size());
  }

  /// The messages of the entry that runs (a micro-step's while it does).
  const std::vector<EventInfo> &events() const {
    return inMicroStep ? program.microEvents : program.events;
  }

  // The generated code's side (rankc_runtime.h).
  void *inputBuffer(size_t index) const { return current.at(index); }
  void setOutput(size_t index, void *at) { outputAt.at(index) = at; }
  void *indexRecordBuffer();
  /// rankc_rt_scratch: the step's planned buffers' block.
  void *scratch(size_t bytes);
  /// The bytes of the block a step's plan asked for last (the largest).
  size_t scratchBytes() const { return scratchSize; }
  void partBegin(int32_t part);
  void partEnd(int32_t part);
  /// Ends the run if a kernel met an index out of range in the last step.
  void checkIndexRecord() const;

private:
  /// Forgets a copy staged for input `index` (a value set since replaces it).
  void dropStaged(size_t index);

  bool startedMpi = false, inMicroStep = false;
  std::vector<int> visibleIns, visibleOuts;
  std::vector<void *> inputBuffers; // owned, one per input
  std::vector<void *> current;      // what each input reads in the next step
  std::vector<void *> outputAt;     // where the last step left each output
  std::vector<std::array<void *, 2>> staging; // inputStaging's, by input
  std::vector<StagedCopy> staged; // setInputStaged's, made by the next step
  std::vector<void *> asideBuffers; // inputBufferOf's parity 1, by input
  // rankc_rt_index_record's buffer (GPU kernels' index errors), once asked.
  void *indexRecord = nullptr;
  // rankc_rt_scratch's blocks: the last is handed out; earlier (smaller)
  // ones are kept while a recorded step may still use them.
  std::vector<void *> scratchBlocks;
  size_t scratchSize = 0;
  std::vector<double> partBegins;
  // Steps done before this process's first (a resumed run's).
  int64_t stepOffset = 0;
};

/// The process's session.
Session &session();

} // namespace rankc::rt

#endif // RANKC_RUNTIME_SESSION_H
