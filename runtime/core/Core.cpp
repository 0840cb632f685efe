//===- Core.cpp - a compiled program, run step by step --------------------===//
//
// The core that OUT/launch's executables (Main.cpp) and embedders
// (rankc_core.h) share: it reads the manifest that the compiler embedded,
// owns the inputs, runs rankc_entry() once per step and carries state from
// one step to the next.
//
// Buffers: every input has a buffer of its own for the whole run (in the
// memory the generated code uses: host or GPU). Generated code asks for an
// input's buffer (rankc_rt_input) rather than filling one, and hands back
// where each output lives (rankc_rt_output) rather than a copy. So carrying
// state is a pointer swap: the output of step k is the input of step k + 1,
// in the step arena it was computed in (Arena.h).
//
//===----------------------------------------------------------------------===//

#include "core/Arena.h"
#include "core/Buffers.h"
#include "core/Core.h"
#include "tooling/Npy.h"
#include "core/StepReplay.h"
#include "rankc_core.h"
#include "rankc_runtime.h"

#include <mpi.h>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <thread>
#include <cerrno>
#include <sys/stat.h>

namespace rankc::rt {

int rank = 0, worldSize = 1;
MPI_Comm comm = MPI_COMM_NULL;
std::string programName, fingerprint;
double timeoutSeconds = 300;
bool tracing = false;
std::vector<TensorInfo> inputs, outputs;
std::vector<EventInfo> events;
std::vector<TraceEvent> trace;
std::vector<StepTimes> stepTimes;
StepTimes *currentStep = nullptr;

namespace {
bool startedMpi = false;
std::vector<void *> inputBuffers;  // owned, one per input
std::vector<void *> current;       // what each input reads in the next step
std::vector<void *> outputAt;      // where the last step left each output
std::vector<int> visibleInputs, visibleOutputs; // rankc_core.h's indices
std::vector<double> partBegin;
// Steps done before this process's first (a resumed run's); the `step` leaf
// and rankc_core_steps_done count from it.
int64_t stepOffset = 0;
struct Check {
  std::string node;
  bool rem = false; // an integer divisor, not an index
};
std::vector<Check> checks; // by check number
// rankc_rt_index_record's buffer (GPU kernels' index errors), once asked for.
void *indexRecord = nullptr;
// Gradient accumulation: every accumulate-th step is an update step, the
// others micro-steps (rankc_micro_entry, with the messages of its own
// manifest, swapped into `events` while it runs).
int64_t accumulate = 1;
std::vector<EventInfo> microEvents;

/// Ends the run if a kernel met an index out of range in the last step.
void checkIndexRecord() {
  if (!indexRecord)
    return;
  int64_t record[3];
  copyToHost(record, indexRecord, sizeof record);
  if (record[0] != 0)
    rankc_rt_index_error(int32_t(record[0] - 1), record[1], record[2]);
}

/// Reads rankc_manifest; with `micro`, rankc_micro_manifest's messages
/// only (the rest is the same as the program's).
void parseManifest(const char *text, bool micro) {
  std::vector<EventInfo> &events = micro ? microEvents : rankc::rt::events;
  events.clear();
  if (!micro) {
    inputs.clear();
    outputs.clear();
    checks.clear();
    visibleInputs.clear();
    visibleOutputs.clear();
    accumulate = 1;
  }
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string kind;
    l >> kind;
    if (micro && kind != "event" && kind != "grid" && kind != "fill")
      continue;
    if (kind == "accumulate") {
      l >> accumulate;
    } else if (kind == "fingerprint") {
      l >> fingerprint;
    } else if (kind == "program") {
      l >> programName;
    } else if (kind == "world_size") {
      int ws;
      l >> ws;
      if (ws != worldSize)
        raise("the program was compiled for %d ranks but runs on %d; use "
              "OUT/launch",
              ws, worldSize);
    } else if (kind == "ranks") {
      std::string r;
      bool mine = false;
      std::string list;
      while (l >> r) {
        mine = mine || r == "all" || r == std::to_string(rank);
        list += (list.empty() ? "" : " ") + r;
      }
      if (!mine)
        raise("rank %d does not run program '%s' (its ranks: %s); "
              "OUT/plan.json says which program each rank runs",
              rank, programName.c_str(), list.c_str());
    } else if (kind == "input" || kind == "output") {
      TensorInfo t;
      int index, r;
      l >> index;
      if (kind == "input")
        l >> t.id;
      l >> t.dtype >> r;
      t.shape.resize(r);
      for (int64_t &d : t.shape)
        l >> d;
      if (kind == "output") {
        std::string colon, name;
        l >> colon;
        while (l >> name)
          t.names.push_back(name);
        t.id = t.names.empty() ? "" : t.names[0];
        outputs.push_back(t);
      } else {
        inputs.push_back(t);
      }
    } else if (kind == "zero") {
      size_t index;
      l >> index;
      inputs.at(index).zero = true;
    } else if (kind == "step") {
      size_t index;
      l >> index;
      inputs.at(index).step = true;
    } else if (kind == "grid") {
      size_t event, d;
      l >> event >> d;
      GridPeer &g = events.at(event).grid;
      g.shape.resize(d);
      g.shift.resize(d);
      for (int64_t &p : g.shape)
        l >> p;
      for (int64_t &s : g.shift)
        l >> s;
      for (size_t i = 0; i < d; ++i) {
        int periodic;
        l >> periodic;
        g.periodic.push_back(periodic != 0);
      }
    } else if (kind == "fill") {
      size_t event;
      int dtype;
      std::string value;
      l >> event >> dtype >> value;
      EventInfo &e = events.at(event);
      e.fillDtype = dtype;
      e.fillFloat = std::strtod(value.c_str(), nullptr);
      e.fillInt = std::strtoll(value.c_str(), nullptr, 10);
    } else if (kind == "state") {
      size_t input;
      int output;
      l >> input >> output;
      inputs.at(input).stateOf = output;
    } else if (kind == "check") {
      int index;
      std::string node, what;
      l >> index >> node >> what;
      checks.push_back({node, what == "rem"});
    } else if (kind == "event") {
      EventInfo e;
      int index;
      l >> index >> e.kind >> e.node;
      std::getline(l >> std::ws, e.tag);
      events.push_back(e);
    }
  }
  if (micro)
    return;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (!inputs[i].zero && !inputs[i].step)
      visibleInputs.push_back(i);
  for (size_t i = 0; i < outputs.size(); ++i)
    if (!outputs[i].names.empty())
      visibleOutputs.push_back(i);
}
} // namespace

void fillBuffer(void *buffer, size_t bytes, const EventInfo &e) {
  size_t size = npy::elementBytes(e.fillDtype);
  std::vector<char> host(bytes);
  for (size_t i = 0; i < bytes / size; ++i)
    npy::storeElement(e.fillDtype, host.data(), i, e.fillFloat, e.fillInt,
                      e.fillInt != 0 || e.fillFloat != 0);
  copyFromHost(buffer, host.data(), bytes);
}

uint64_t splitmix64(uint64_t &state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

void makeFolders(const std::string &path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') {
      std::string prefix = path.substr(0, i);
      if (mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
        fail("cannot create folder '%s': %s", prefix.c_str(), strerror(errno));
    }
}

size_t TensorInfo::bytes() const {
  return size_t(elements()) * npy::elementBytes(dtype);
}

double now() { return MPI_Wtime(); }

void checkMpi(int rc, const char *what) {
  if (rc == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fail("%s failed: %.*s", what, len, text);
}

std::string describe(int event, int64_t peer) {
  if (event < 0 || event >= int(events.size()))
    return "a message";
  const EventInfo &e = events[event];
  std::string s = e.kind + " '" + e.node + "' (tag " + e.tag + ")";
  if (e.kind == "send")
    s += " to rank " + std::to_string(peer);
  else if (e.kind == "recv")
    s += " from rank " + std::to_string(peer);
  return s;
}

namespace {
/// printf into a message of at most 2 KiB.
std::string message(const char *fmt, va_list args) {
  char msg[2048];
  vsnprintf(msg, sizeof msg, fmt, args);
  return msg;
}
} // namespace

void raise(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string msg = message(fmt, args);
  va_end(args);
  throw Error(msg);
}

void fail(const char *fmt, ...) {
  va_list args;
  va_start(args, fmt);
  std::string text = message(fmt, args);
  va_end(args);
  const char *msg = text.c_str();
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  // Before main() (a GPU module loaded by a constructor) only the launcher
  // knows the rank.
  const char *launcherRank = std::getenv("PMI_RANK");
  int who = up || !launcherRank ? rank : std::atoi(launcherRank);
  fprintf(stderr, "error: rank %d (%s): %s\n", who,
          program_invocation_short_name, msg);
  fflush(stderr);
  // Give mpiexec's output forwarding time to pass the message on before
  // the abort (or, before MPI is up, the exit) tears the job down:
  // otherwise Hydra sometimes loses it.
  if ((up && !down) || launcherRank)
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  if (up && !down)
    MPI_Abort(MPI_COMM_WORLD, 1);
  // Not exit(): destructors (a GPU module's unload) must not run on a
  // half-initialized driver.
  fflush(stdout);
  std::_Exit(1);
}

} // namespace rankc::rt

using namespace rankc::rt;

namespace {
const TensorInfo &visibleInput(int i) {
  if (i < 0 || size_t(i) >= visibleInputs.size())
    raise("input index %d out of range (%zu inputs)", i, visibleInputs.size());
  return inputs[visibleInputs[i]];
}
const TensorInfo &visibleOutput(int i) {
  if (i < 0 || size_t(i) >= visibleOutputs.size())
    raise("output index %d out of range (%zu outputs)", i,
          visibleOutputs.size());
  return outputs[visibleOutputs[i]];
}
} // namespace

extern "C" {

/// {allocated, aligned, offset, sizes[1], strides[1]}: a memref<?xi8>, the
/// result of a function declared with llvm.emit_c_interface.
struct rankc_byte_memref {
  void *allocated, *aligned;
  int64_t offset, size, stride;
};

void _mlir_ciface_rankc_rt_input(rankc_byte_memref *result, int32_t index) {
  const TensorInfo &t = inputs.at(index);
  void *p = current.at(index);
  *result = {p, p, 0, int64_t(t.bytes()), 1};
}

void rankc_rt_output(int32_t index, int64_t data) {
  outputAt.at(index) = reinterpret_cast<void *>(data);
}

void rankc_rt_index_error(int32_t check, int64_t index, int64_t bound) {
  bool known = check >= 0 && size_t(check) < checks.size();
  const char *node = known ? checks[check].node.c_str() : "?";
  if (known && checks[check].rem)
    fail("node '%s': integer remainder by zero (rem with a divisor of 0)",
         node);
  fail("node '%s': index %lld is out of range [0, %lld)", node,
       (long long)index, (long long)bound);
}

void _mlir_ciface_rankc_rt_index_record(rankc_byte_memref *result) {
  // Allocated (zeroed) in the first step, which never runs from a CUDA
  // graph recording; every later step gets the same buffer.
  if (!indexRecord)
    indexRecord = allocBuffer(3 * sizeof(int64_t), "the index record");
  *result = {indexRecord, indexRecord, 0, 3 * sizeof(int64_t), 1};
}

void rankc_rt_part_begin(int32_t part) {
  if (partBegin.size() <= size_t(part))
    partBegin.resize(part + 1);
  partBegin[part] = now();
}

void rankc_rt_part_end(int32_t part) {
  double t = now();
  if (currentStep)
    currentStep->compute += t - partBegin[part];
  if (tracing)
    trace.push_back({"part " + std::to_string(part), "compute",
                     partBegin[part], t});
}

void rankc_core_init(int *argc, char ***argv, double timeout) {
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
  parseManifest(rankc_manifest, false);
  if (accumulate > 1) {
    if (!rankc_micro_entry || !rankc_micro_manifest)
      raise("the program accumulates gradients over %lld steps but has no "
            "micro-step (rankc_micro_entry): rebuild it with this rankc",
            (long long)accumulate);
    parseManifest(rankc_micro_manifest, true);
  }
  initBuffers(rank);
  initDeviceCollectives();
  for (const TensorInfo &t : inputs) // zeroed
    inputBuffers.push_back(allocBuffer(
        t.bytes(), (t.zero ? "optimizer state '" : "input '") + t.id + "'"));
  current = inputBuffers;
  outputAt.assign(outputs.size(), nullptr);
}

int rankc_core_rank(void) { return rank; }
int rankc_core_world_size(void) { return worldSize; }
int rankc_core_num_inputs(void) { return visibleInputs.size(); }
int rankc_core_num_outputs(void) { return visibleOutputs.size(); }
const char *rankc_core_input_name(int i) { return visibleInput(i).id.c_str(); }
const char *rankc_core_output_name(int i, int j) {
  const TensorInfo &t = visibleOutput(i);
  return j >= 0 && size_t(j) < t.names.size() ? t.names[j].c_str() : nullptr;
}
int rankc_core_input_dtype(int i) { return visibleInput(i).dtype; }
int rankc_core_output_dtype(int i) { return visibleOutput(i).dtype; }
int rankc_core_input_rank(int i) { return visibleInput(i).shape.size(); }
int rankc_core_output_rank(int i) { return visibleOutput(i).shape.size(); }
const int64_t *rankc_core_input_shape(int i) {
  return visibleInput(i).shape.data();
}
const int64_t *rankc_core_output_shape(int i) {
  return visibleOutput(i).shape.data();
}
int rankc_core_input_is_state(int i) { return visibleInput(i).stateOf >= 0; }
int64_t rankc_core_steps_done(void) { return stepTimes.size() + stepOffset; }

} // extern "C"

namespace rankc::rt {
std::vector<size_t> carriedInputs() {
  std::vector<size_t> carried;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].stateOf >= 0)
      carried.push_back(i);
  return carried;
}
void *carriedBuffer(size_t input) { return current.at(input); }
void restoreInput(size_t input, const void *host) {
  copyFromHost(inputBuffers.at(input), host, inputs.at(input).bytes());
  current[input] = inputBuffers[input];
}
void setStepsDone(int64_t steps) {
  // (Steps this process ran keep their arenas' and recordings' count.)
  stepOffset = steps - int64_t(stepTimes.size());
}
} // namespace rankc::rt

extern "C" {
int64_t rankc_core_accumulate(void) { return accumulate; }

void rankc_core_set_input(int i, const void *host) {
  visibleInput(i);
  int index = visibleInputs[i];
  copyFromHost(inputBuffers[index], host, inputs[index].bytes());
  current[index] = inputBuffers[index];
}

void rankc_core_step(void) {
  int64_t step = stepTimes.size(); // of this process (arenas, recordings)
  // `step` leaves: the number of this step, in their dtype.
  int64_t number = step + stepOffset;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].step) {
      char value[8] = {};
      npy::storeElement(inputs[i].dtype, value, 0, double(number), number,
                        number != 0);
      copyFromHost(inputBuffers[i], value, inputs[i].bytes());
      current[i] = inputBuffers[i];
    }
  // Carried values that live in the arena this step reuses move first.
  std::vector<std::pair<void **, size_t>> carried;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].stateOf >= 0)
      carried.push_back({&current[i], inputs[i].bytes()});
  beginStepArenas(programArenas(), step, carried);

  stepTimes.emplace_back();
  currentStep = &stepTimes.back();
  double begin = now();
  bool micro = accumulate > 1 && (number + 1) % accumulate != 0;
  if (micro)
    std::swap(events, microEvents);
  bool replayed = runStep(step, current, outputAt,
                          micro ? rankc_micro_entry : rankc_entry);
  waitAll();
  if (micro)
    std::swap(events, microEvents);
  synchronizeBuffers(); // the step's last library call, if any, is done
  checkIndexRecord();   // before anyone reads this step's outputs
  double end = now();
  currentStep->wall = end - begin;
  if (replayed) // one launch: all of the step is its computation
    currentStep->compute = currentStep->wall - currentStep->blocked;
  if (tracing)
    trace.push_back({"step " + std::to_string(step), "step", begin, end});
  currentStep = nullptr;
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].stateOf >= 0)
      current[i] = outputAt[inputs[i].stateOf];
}

void rankc_core_get_output(int i, void *host) {
  visibleOutput(i);
  int index = visibleOutputs[i];
  // (A zero-size output may live at address 0: check the steps, not it.)
  if (stepTimes.empty())
    raise("output '%s' is read before any step ran", outputs[index].id.c_str());
  copyToHost(host, outputAt[index], outputs[index].bytes());
}

void rankc_core_finalize(void) {
  synchronizeBuffers();
  finishStepReplay();
  for (void *b : inputBuffers)
    freeBuffer(b);
  inputBuffers.clear();
  if (indexRecord)
    freeBuffer(indexRecord);
  indexRecord = nullptr;
  current.clear();
  StepArenas &a = programArenas();
  a.arenas[0].release();
  a.arenas[1].release();
  finalizeDeviceCollectives();
  releaseStaging();
  outputAt.clear();
  stepTimes.clear();
  trace.clear();
  checkMpi(MPI_Barrier(comm), "MPI_Barrier");
  MPI_Comm_free(&comm);
  comm = MPI_COMM_NULL;
  if (startedMpi) {
    MPI_Finalize();
    startedMpi = false;
  }
}

} // extern "C"
