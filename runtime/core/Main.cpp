//===- Main.cpp - the executables' main(): a thin client of the session ---===//
//
// Parses the command line that OUT/launch passes, supplies the inputs (from
// .npy files, or reproducible pseudo-random values), runs the steps and
// writes the last step's outputs, then the trace and statistics. Outputs
// are written only once every rank has finished its steps (launch moves
// them into place only when every rank succeeded).
//
//===----------------------------------------------------------------------===//

#include "core/Buffers.h"
#include "core/Checkpoint.h"
#include "core/Core.h"
#include "core/Feeds.h"
#include "core/RunMonitor.h"
#include "core/Session.h"
#include "tooling/Npy.h"
#include "rankc_runtime.h"

#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <optional>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

using namespace rankc::rt;

namespace {

// Reproducible inputs: splitmix64 seeded with FNV-1a(input id) ^ rank.
void fillRandom(const std::string &id, int dtype, int64_t n, void *data) {
  uint64_t state = 1469598103934665603ull;
  for (char c : id)
    state = (state ^ uint8_t(c)) * 1099511628211ull;
  state ^= uint64_t(session().rank);
  for (int64_t i = 0; i < n; ++i) {
    uint64_t r = splitmix64(state);
    double u = double(r >> 11) / double(1ull << 53) * 2.0 - 1.0; // [-1, 1)
    bool isUnsigned = dtype == RANKC_U8 || dtype == RANKC_U16 || dtype == RANKC_U32;
    int64_t k = int64_t(r % 17) - (isUnsigned ? 0 : 8); // [-8, 8] or [0, 16]
    npy::storeElement(dtype, data, i, u, k, (r & 1) != 0);
  }
}

int64_t elements(const std::vector<int64_t> &shape) {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

void usage(const char *argv0) {
  fprintf(stderr,
          "usage: %s [--inputs IN] [--outputs RES] [--steps N] "
          "[--timeout SECONDS] [--trace FILE] [--stats FILE] "
          "[--kernel-stats DIR] [--feed ID,...] [--shuffle SEED] "
          "[--save-every K --snapshots DIR] [--log-every K] [--metrics FILE] "
          "[--check-finite] [--checkpoint-every K] [--checkpoint-dir DIR] "
          "[--keep N] [--resume DIR|latest]\n",
          argv0);
}

/// Seconds > 0 and finite, the whole text a number (nan, inf, words and ''
/// would turn the watchdog off or into 0 s).
bool parseSeconds(const std::string &v, double &out) {
  char *end = nullptr;
  out = std::strtod(v.c_str(), &end);
  return !v.empty() && *end == 0 && std::isfinite(out) && out > 0;
}

/// An integer in [1, 2^63) (K of --save-every and --log-every, --steps).
bool parseCount(const std::string &v, int64_t &out) {
  char *end = nullptr;
  errno = 0;
  out = std::strtoll(v.c_str(), &end, 10);
  return !v.empty() && !*end && out >= 1 && errno != ERANGE;
}

std::vector<std::string> splitIds(const std::string &list) {
  std::vector<std::string> ids;
  for (size_t at = 0; at <= list.size();) {
    size_t end = list.find(',', at);
    if (end == std::string::npos)
      end = list.size();
    ids.push_back(list.substr(at, end - at));
    at = end + 1;
  }
  return ids;
}

// SIGTERM or SIGINT during a run with --checkpoint-dir: a checkpoint at
// the end of the step, then every rank stops (exit 3).
volatile std::sig_atomic_t stopSignal = 0;
void onStopSignal(int sig) { stopSignal = sig; }

int run(int argc, char **argv) {
  std::string inputsDir, outputsDir, traceFile, statsFile, kernelStatsDir;
  double timeout = 0;
  int64_t steps = 1;
  std::vector<std::string> fed;
  std::optional<uint64_t> shuffle;
  MonitorOptions monitor;
  CheckpointPolicy checkpoints;
  std::string resume;
  if (const char *t = std::getenv("RANKC_TIMEOUT")) { // the command line wins
    if (!parseSeconds(t, timeout)) {
      fprintf(stderr, "error: RANKC_TIMEOUT takes a number of seconds > 0, got '%s'\n", t);
      return 2;
    }
  }
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage(argv[0]);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--inputs")
      inputsDir = value();
    else if (a == "--outputs")
      outputsDir = value();
    else if (a == "--trace")
      traceFile = value();
    else if (a == "--stats")
      statsFile = value();
    else if (a == "--kernel-stats")
      kernelStatsDir = value();
    else if (a == "--timeout") {
      std::string v = value();
      if (!parseSeconds(v, timeout)) {
        fprintf(stderr, "error: --timeout takes a number of seconds > 0, got '%s'\n",
                v.c_str());
        return 2;
      }
    }
    else if (a == "--steps" || a == "--save-every" || a == "--log-every" ||
             a == "--checkpoint-every" || a == "--keep") {
      std::string v = value();
      int64_t &n = a == "--steps"              ? steps
                   : a == "--save-every"       ? monitor.saveEvery
                   : a == "--checkpoint-every" ? checkpoints.every
                   : a == "--keep"             ? checkpoints.keep
                                               : monitor.logEvery;
      if (!parseCount(v, n)) {
        fprintf(stderr, "error: %s takes an integer >= 1, got '%s'\n",
                a.c_str(), v.c_str());
        return 2;
      }
    } else if (a == "--feed") {
      for (const std::string &id : splitIds(value()))
        if (!id.empty())
          fed.push_back(id);
    } else if (a == "--shuffle") {
      std::string v = value();
      char *end = nullptr;
      errno = 0;
      unsigned long long seed = std::strtoull(v.c_str(), &end, 10);
      if (v.empty() || *end || v[0] == '-' || errno == ERANGE) {
        fprintf(stderr, "error: --shuffle takes an integer in [0, 2^64), got '%s'\n",
                v.c_str());
        return 2;
      }
      shuffle = seed;
    } else if (a == "--snapshots") {
      monitor.snapshotDir = value();
    } else if (a == "--metrics") {
      monitor.metricsFile = value();
    } else if (a == "--check-finite") {
      monitor.checkFinite = true;
    } else if (a == "--checkpoint-dir") {
      checkpoints.dir = value();
    } else if (a == "--resume") {
      resume = value();
    } else {
      usage(argv[0]);
      return 2;
    }
  }
  Session &session = rankc::rt::session();
  session.start(&argc, &argv, timeout);
  // A run ends with an update: its outputs are the updated parameters.
  if (int64_t k = session.program.accumulate; steps % k != 0)
    fail("--steps %lld is not a multiple of the program's 'accumulate' %lld "
         "(the parameters are updated every %lld steps)",
         (long long)steps, (long long)k, (long long)k);
  session.tracing = !traceFile.empty();
  if (!kernelStatsDir.empty())
    enableKernelTiming();
  int rank = session.rank;
  // launch maps the pid mpiexec names when a rank dies by a signal to the
  // rank (lib/Target/Executable.cpp, launchScript).
  if (const char *pids = std::getenv("RANKC_PID_DIR"); pids && *pids) {
    std::string path = std::string(pids) + "/" + std::to_string(getpid());
    if (FILE *f = std::fopen(path.c_str(), "w")) {
      std::fprintf(f, "%d\n", rank);
      std::fclose(f);
    }
  }

  if (!fed.empty() && inputsDir.empty())
    fail("--feed needs --inputs: a feed is IN/rank<r>/ID.npy");
  if (shuffle && fed.empty())
    fail("--shuffle needs --feed: it orders the rows of the feeds");
  if (monitor.saveEvery && monitor.snapshotDir.empty())
    monitor.snapshotDir = outputsDir;
  if (monitor.saveEvery && monitor.snapshotDir.empty())
    fail("--save-every needs --outputs (or --snapshots): the folder of step<k>/");
  if (checkpoints.every && checkpoints.dir.empty())
    fail("--checkpoint-every needs --checkpoint-dir: the folder of step<k>/");
  if (resume == "latest" && checkpoints.dir.empty())
    fail("--resume latest needs --checkpoint-dir: the folder it looks in");
  Feeds feeds;
  feeds.open(fed, inputsDir, rank, shuffle);

  // Inputs: read once, before the first step (a fed one every step).
  for (int index : session.visibleInputs()) {
    const TensorInfo &t = session.program.inputs[index];
    const std::string &id = t.id;
    if (std::find(fed.begin(), fed.end(), id) != fed.end())
      continue;
    int dtype = t.dtype;
    const std::vector<int64_t> &shape = t.shape;
    std::vector<char> host(elements(shape) * npy::elementBytes(dtype) + 1);
    if (inputsDir.empty()) {
      fillRandom(id, dtype, elements(shape), host.data());
    } else {
      std::string path =
          inputsDir + "/rank" + std::to_string(rank) + "/" + id + ".npy";
      std::string error;
      if (!npy::read(path, dtype, shape, host.data(), error))
        fail("input '%s': %s", id.c_str(), error.c_str());
    }
    session.setInput(index, host.data());
  }

  // A resumed run continues the step numbering (the feeds' rows, the
  // `step` leaf, the accumulation window) where its checkpoint was taken.
  if (!resume.empty()) {
    std::string from = resume == "latest" ? latestCheckpoint(checkpoints.dir)
                                          : resume;
    if (from.empty())
      fail("--resume latest: no complete checkpoint in '%s'",
           checkpoints.dir.c_str());
    loadRank(from);
  }
  int64_t start = session.stepsDone();
  if (start >= steps)
    fail("the checkpoint is at step %lld: --steps %lld leaves nothing to run "
         "(--steps counts from step 0)",
         (long long)start, (long long)steps);
  if (!checkpoints.dir.empty()) {
    std::signal(SIGTERM, onStopSignal);
    std::signal(SIGINT, onStopSignal);
  }

  monitor.totalSteps = steps;
  RunMonitor monitoring;
  monitoring.open(monitor);
  checkMpi(MPI_Barrier(session.comm), "MPI_Barrier");
  for (int64_t s = start; s < steps; ++s) {
    double begin = now(); // (a step's time includes taking its fed rows)
    feeds.beginStep(s);
    session.step();
    monitoring.afterStep(s + 1, now() - begin);
    if (checkpoints.dir.empty())
      continue;
    // Every rank stops at the same step: a signal that reached one is
    // everyone's.
    int signal = stopSignal, any = 0;
    checkMpi(MPI_Allreduce(&signal, &any, 1, MPI_INT, MPI_MAX, session.comm),
             "MPI_Allreduce");
    bool last = s + 1 == steps;
    // A checkpoint written while this step ran is committed now (or, when
    // stopping, waited for); a new one is taken at this boundary and
    // written while the next steps run.
    finishCheckpoint(/*wait=*/any != 0);
    if (any)
      writeCheckpoint(checkpoints, s + 1);
    else if (checkpoints.every && (s + 1) % checkpoints.every == 0 && !last)
      beginCheckpoint(checkpoints, s + 1);
    if (any) {
      if (rank == 0) {
        printf("launch: stopped by %s after step %lld; checkpoint %s/step%lld "
               "written (continue with --resume latest)\n",
               any == SIGINT ? "SIGINT" : "SIGTERM", (long long)(s + 1),
               checkpoints.dir.c_str(), (long long)(s + 1));
        fflush(stdout);
      }
      feeds.finish();
      session.finish();
      return 3;
    }
  }
  monitoring.finish();
  if (!checkpoints.dir.empty())
    finishCheckpoint(/*wait=*/true);
  // The last step's too, when it falls on the period.
  if (checkpoints.every && steps % checkpoints.every == 0)
    writeCheckpoint(checkpoints, steps);

  if (!outputsDir.empty()) {
    std::string dir = outputsDir + "/rank" + std::to_string(rank);
    makeFolders(dir);
    for (int index : session.visibleOutputs()) {
      const TensorInfo &t = session.program.outputs[index];
      int dtype = t.dtype;
      const std::vector<int64_t> &shape = t.shape;
      std::vector<char> host(elements(shape) * npy::elementBytes(dtype) + 1);
      session.getOutput(index, host.data());
      for (const std::string &name : t.names) {
        std::string error;
        if (!npy::write(dir + "/" + name + ".npy", dtype, shape, host.data(),
                        error))
          fail("output '%s': %s", name.c_str(), error.c_str());
      }
    }
  }
  if (!traceFile.empty())
    writeTrace(traceFile);
  if (!statsFile.empty())
    writeStats(statsFile);
  if (!kernelStatsDir.empty()) {
    makeFolders(kernelStatsDir);
    writeKernelStats(kernelStatsDir + "/rank" + std::to_string(rank) +
                     ".json");
  }
  feeds.finish();
  session.finish();
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // What the C API returns as an error ends an executable's job.
  try {
    return run(argc, argv);
  } catch (const Error &e) {
    fail("%s", e.what());
  }
}
