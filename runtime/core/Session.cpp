//===- Session.cpp - a rank's run of a compiled program -------------------===//
//
// Buffers: every input has a buffer of its own for the whole run (in the
// memory the generated code uses: host or GPU). Generated code asks for an
// input's buffer (rankc_rt_input) rather than filling one, and hands back
// where each output lives (rankc_rt_output) rather than a copy. So carrying
// state is a pointer swap: the output of step k is the input of step k + 1,
// in the step arena it was computed in (Arena.h).
//
//===----------------------------------------------------------------------===//

#include "core/Session.h"
#include "core/Arena.h"
#include "core/Buffers.h"
#include "core/Core.h"
#include "core/StepReplay.h"
#include "tooling/Npy.h"
#include "rankc_runtime.h"

#include <algorithm>

namespace rankc::rt {

Session &session() {
  static Session s;
  return s;
}

void Session::start(int *argc, char ***argv, double timeout) {
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  if (down)
    raise("MPI is already finalized: a process initializes MPI once, so "
          "the program can be initialized again only while the application "
          "keeps MPI up");
  if (!up) {
    MPI_Init(argc, argv);
    startedMpi = true;
  }
  if (comm == MPI_COMM_NULL) {
    // MPI_COMM_WORLD's handler aborts: this duplicate's returns, so that
    // a failed operation is reported with what the program was doing.
    if (MPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS)
      fail("MPI_Comm_dup failed");
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
  }
  checkMpi(MPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  checkMpi(MPI_Comm_size(comm, &worldSize), "MPI_Comm_size");
  if (timeout > 0)
    timeoutSeconds = timeout;
  // Before any buffer exists: a wrong world size or rank leaves nothing
  // to free.
  program.parse(rankc_manifest);
  if (program.worldSize != worldSize)
    raise("the program was compiled for %d ranks but runs on %d; use "
          "OUT/launch",
          program.worldSize, worldSize);
  std::string list;
  if (!program.ranks.empty() && !program.runsOn(rank, list))
    raise("rank %d does not run program '%s' (its ranks: %s); "
          "OUT/plan.json says which program each rank runs",
          rank, program.program.c_str(), list.c_str());
  if (program.accumulate > 1) {
    if (!rankc_micro_entry || !rankc_micro_manifest)
      raise("the program accumulates gradients over %lld steps but has no "
            "micro-step (rankc_micro_entry): rebuild it with this rankc",
            (long long)program.accumulate);
    program.parseMicroStep(rankc_micro_manifest);
  }
  visibleIns.clear();
  visibleOuts.clear();
  for (size_t i = 0; i < program.inputs.size(); ++i)
    if (!program.inputs[i].zero && !program.inputs[i].step)
      visibleIns.push_back(i);
  for (size_t i = 0; i < program.outputs.size(); ++i)
    if (!program.outputs[i].names.empty())
      visibleOuts.push_back(i);
  initBuffers(rank);
  initDeviceCollectives();
  deviceBytesAtStart = deviceBytesInUse();
  for (const TensorInfo &t : program.inputs) // zeroed
    inputBuffers.push_back(allocBuffer(
        t.bytes(), (t.zero ? "optimizer state '" : "input '") + t.id + "'"));
  current = inputBuffers;
  outputAt.assign(program.outputs.size(), nullptr);
}

void Session::dropStaged(size_t index) {
  void *to = inputBuffers.at(index);
  staged.erase(std::remove_if(staged.begin(), staged.end(),
                              [&](const StagedCopy &c) { return c.to == to; }),
               staged.end());
}

void Session::setInput(size_t index, const void *host) {
  // (A value set now replaces one staged for the next step.)
  dropStaged(index);
  copyFromHost(inputBuffers.at(index), host, program.inputs.at(index).bytes());
  current[index] = inputBuffers[index];
}

void *Session::inputStaging(size_t index, int slot) {
  if (staging.empty())
    staging.resize(program.inputs.size(), {nullptr, nullptr});
  void *&block = staging.at(index).at(slot);
  if (!block)
    block = allocStaging(program.inputs.at(index).bytes());
  return block;
}

void Session::setInputStaged(size_t index, int slot) {
  dropStaged(index);
  staged.push_back({inputBuffers.at(index), inputStaging(index, slot),
                    program.inputs.at(index).bytes()});
  current[index] = inputBuffers[index];
}

void *Session::inputBufferOf(size_t index, int parity) {
  if (!parity)
    return inputBuffers.at(index);
  asideBuffers.resize(program.inputs.size(), nullptr);
  void *&b = asideBuffers.at(index);
  if (!b)
    b = allocBuffer(program.inputs.at(index).bytes(),
                    "input '" + program.inputs.at(index).id + "' (fed)");
  return b;
}

void Session::step() {
  const std::vector<TensorInfo> &inputs = program.inputs;
  int64_t step = stepTimes.size(); // of this process (arenas, recordings)
  // `step` leaves: the number of this step, in their dtype.
  int64_t number = stepsDone();
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].step) {
      // (The step before is done: its copy from the slot is too.)
      npy::storeElement(inputs[i].dtype, inputStaging(i, 0), 0,
                        double(number), number, number != 0);
      setInputStaged(i, 0);
    }
  // Carried values that live in the arena this step reuses move first.
  const std::vector<size_t> carriedInputs = carried();
  std::vector<std::pair<void **, size_t>> moving;
  for (size_t i : carriedInputs)
    moving.push_back({&current[i], inputs[i].bytes()});
  beginStepArenas(programArenas(), step, moving);

  stepTimes.emplace_back();
  currentStep = &stepTimes.back();
  double begin = now();
  stepBegin = begin;
  int64_t k = program.accumulate;
  bool micro = k > 1 && (number + 1) % k != 0;
  inMicroStep = micro;
  bool replayed = runStep(step, current, staged, outputAt,
                          inMicroStep ? rankc_micro_entry : rankc_entry);
  staged.clear();
  waitAll();
  inMicroStep = false;
  synchronizeBuffers(); // the step's last library call, if any, is done
  checkIndexRecord();   // before anyone reads this step's outputs
  double end = now();
  currentStep->wall = end - begin;
  if (replayed) // one launch: all of the step is its computation
    currentStep->compute = currentStep->wall - currentStep->blocked;
  if (tracing) {
    trace.push_back({"step " + std::to_string(step), "step", begin, end});
    // Beside the measured reductions, what the machine model predicted
    // for each bucket (--bucket-cap-mb auto), placed from this step's start.
    if (!micro)
      for (const EventInfo &e : program.events)
        if (e.bucket >= 0 && e.predicted.known)
          trace.push_back({"bucket " + std::to_string(e.bucket) +
                               " (predicted)",
                           "predicted", begin + e.predicted.start,
                           begin + e.predicted.start + e.predicted.reduce});
  }
  currentStep = nullptr;
  if (stepTimes.size() == 1)
    deviceBytesAfterFirstStep = deviceBytesInUse();
  for (size_t i : carriedInputs)
    current[i] = outputAt[inputs[i].stateOf];
}

void Session::getOutput(size_t index, void *host) const {
  // (A zero-size output may live at address 0: check the steps, not it.)
  if (stepTimes.empty())
    raise("output '%s' is read before any step ran",
          program.outputs.at(index).id.c_str());
  copyToHost(host, outputAt.at(index), program.outputs[index].bytes());
}

std::vector<size_t> Session::carried() const {
  std::vector<size_t> out;
  for (size_t i = 0; i < program.inputs.size(); ++i)
    if (program.inputs[i].stateOf >= 0)
      out.push_back(i);
  return out;
}

void *Session::indexRecordBuffer() {
  // Allocated (zeroed) in the first step, which never runs from a CUDA
  // graph recording; every later step gets the same buffer.
  if (!indexRecord)
    indexRecord = allocBuffer(3 * sizeof(int64_t), "the index record");
  return indexRecord;
}

void *Session::scratch(size_t bytes) {
  // A step function asks at every call, with its plan's fixed size: after
  // the first steps (never recorded: StepReplay.cpp) the block is there.
  if (scratchBlocks.empty() || bytes > scratchSize) {
    scratchBlocks.push_back(allocBuffer(bytes, "the step's planned buffers"));
    scratchSize = bytes;
  }
  return scratchBlocks.back();
}

void Session::checkIndexRecord() const {
  if (!indexRecord)
    return;
  int64_t record[3];
  copyToHost(record, indexRecord, sizeof record);
  if (record[0] != 0)
    rankc_rt_index_error(int32_t(record[0] - 1), record[1], record[2]);
}

void Session::partBegin(int32_t part) {
  if (partBegins.size() <= size_t(part))
    partBegins.resize(part + 1);
  partBegins[part] = now();
}

void Session::partEnd(int32_t part) {
  double t = now();
  if (currentStep)
    currentStep->compute += t - partBegins[part];
  if (tracing)
    trace.push_back({"part " + std::to_string(part), "compute",
                     partBegins[part], t});
}

void Session::finish() {
  synchronizeBuffers();
  finishStepReplay();
  for (void *b : inputBuffers)
    freeBuffer(b);
  inputBuffers.clear();
  for (void *b : asideBuffers)
    if (b)
      freeBuffer(b);
  asideBuffers.clear();
  if (indexRecord)
    freeBuffer(indexRecord);
  indexRecord = nullptr;
  for (void *b : scratchBlocks)
    freeBuffer(b);
  scratchBlocks.clear();
  scratchSize = 0;
  current.clear();
  StepArenas &a = programArenas();
  a.arenas[0].release();
  a.arenas[1].release();
  finalizeDeviceCollectives();
  staged.clear();
  for (std::array<void *, 2> &slots : staging)
    for (void *block : slots)
      freeStaging(block);
  staging.clear();
  releaseStaging();
  outputAt.clear();
  stepTimes.clear();
  bucketTimes.clear();
  stepOffset = 0;
  trace.clear();
  checkMpi(MPI_Barrier(comm), "MPI_Barrier");
  MPI_Comm_free(&comm);
  comm = MPI_COMM_NULL;
  if (startedMpi) {
    MPI_Finalize();
    startedMpi = false;
  }
}

} // namespace rankc::rt
