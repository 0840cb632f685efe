//===- RunMonitor.h - what a long run shows while it runs ------*- C++ -*-===//
//
// launch's --log-every, --metrics, --check-finite and --save-every (cli.md,
// "Real runs"), after each step of OUT/launch's executables (Main.cpp):
//  - a log line every K steps, printed once per run by rank 0: the step,
//    the step time, steps per second, the time left and every 0-d float
//    output of rank 0's program, averaged over the ranks for the names that
//    every rank's program has (a data-parallel loss);
//  - the same values for every step as JSON lines (--metrics FILE);
//  - every float output checked for NaN and infinity (--check-finite);
//  - every output written to RES/step<k>/rank<r>/ after every K-th step
//    (k = steps done): copied out of the step's buffers at once, written
//    to disk by a thread while the next steps run.
// The log's reduction is a collective every rank makes at the same steps.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_RUNMONITOR_H
#define RANKC_RUNTIME_RUNMONITOR_H

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace rankc::rt {

struct MonitorOptions {
  int64_t totalSteps = 1;
  int64_t logEvery = 0, saveEvery = 0; // 0: off
  std::string metricsFile;             // empty: off
  std::string snapshotDir;             // RES, for --save-every
  bool checkFinite = false;
};

class RunMonitor {
public:
  ~RunMonitor();
  /// Collective: every rank calls it once, before the first step.
  void open(const MonitorOptions &options);
  /// After each step; `done` steps are done, the last took `seconds`.
  /// Collective when a log line or a metrics line is due.
  void afterStep(int64_t done, double seconds);
  /// Waits for the snapshots still being written.
  void finish();

private:
  struct Scalar {
    std::string name;
    int output = 0;
    bool everyRank = false; // averaged over the ranks
  };
  struct Snapshot {
    std::string path;
    int dtype;
    std::vector<int64_t> shape;
    std::vector<char> data;
  };
  void agreeOnScalars();
  /// The averages (a collective); a log line when `log`, a metrics line.
  void report(int64_t done, double seconds, bool log);
  void checkFinite(int64_t done);
  void snapshot(int64_t done);
  void writer();

  MonitorOptions options;
  std::vector<Scalar> scalars; // rank 0's 0-d float outputs, every rank's common ones
  std::vector<int> commonOutputs; // this rank's output of each common name
  FILE *metrics = nullptr;
  double windowStart = 0, runStart = 0;
  int64_t windowSteps = 0;
  // The snapshot writer.
  std::thread thread;
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<Snapshot> queue;
  bool stop = false;
};

} // namespace rankc::rt

#endif // RANKC_RUNTIME_RUNMONITOR_H
