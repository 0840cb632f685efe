//===- RunMonitor.cpp - what a long run shows while it runs ---------------===//

#include "core/RunMonitor.h"
#include "core/Buffers.h"
#include "core/Core.h"
#include "core/Session.h"
#include "tooling/Npy.h"
#include "rankc_core.h"
#include "rankc_runtime.h"

#include <mpi.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <sys/stat.h>

namespace rankc::rt {

namespace {

bool isFloatDType(int dtype) {
  return dtype == RANKC_F16 || dtype == RANKC_BF16 || dtype == RANKC_F32 ||
         dtype == RANKC_F64;
}

std::vector<int64_t> outputShape(int i) {
  const int64_t *dims = rankc_core_output_shape(i);
  return std::vector<int64_t>(dims, dims + rankc_core_output_rank(i));
}

size_t outputBytes(int i) {
  size_t bytes = npy::elementBytes(rankc_core_output_dtype(i));
  for (int64_t d : outputShape(i))
    bytes *= d;
  return bytes;
}

double scalarOutput(int i) {
  char value[8] = {};
  rankc_core_get_output(i, value);
  return npy::loadElement(rankc_core_output_dtype(i), value, 0);
}

/// "1:02:03" or "2:03".
std::string clock(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "?";
  long s = long(seconds + 0.5);
  char text[32];
  if (s >= 3600)
    snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
  return text;
}

} // namespace

RunMonitor::~RunMonitor() { finish(); }

void RunMonitor::open(const MonitorOptions &o) {
  options = o;
  if (options.logEvery || !options.metricsFile.empty())
    agreeOnScalars();
  if (!options.metricsFile.empty() && session().rank == 0) {
    metrics = std::fopen(options.metricsFile.c_str(), "w");
    if (!metrics)
      fail("--metrics: cannot write '%s': %s", options.metricsFile.c_str(),
           strerror(errno));
  }
  if (options.saveEvery)
    thread = std::thread([this] { writer(); });
  runStart = windowStart = now();
}

// Which 0-d float outputs are logged: rank 0's, in its order; those whose
// name every rank's program has are averaged over the ranks. Rank 0 learns
// every rank's names (one gather) and says which are common (a broadcast).
void RunMonitor::agreeOnScalars() {
  std::string mine;
  std::vector<std::pair<std::string, int>> named;
  for (int i = 0; i < rankc_core_num_outputs(); ++i) {
    if (rankc_core_output_rank(i) != 0 ||
        !isFloatDType(rankc_core_output_dtype(i)))
      continue;
    for (int j = 0; const char *n = rankc_core_output_name(i, j); ++j) {
      named.push_back({n, i});
      mine += std::string(n) + "\n";
    }
  }
  int length = int(mine.size());
  std::vector<int> lengths(session().rank == 0 ? session().worldSize : 0), offsets;
  checkMpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, session().comm),
           "MPI_Gather");
  std::string all;
  if (session().rank == 0) {
    int total = 0;
    for (int l : lengths) {
      offsets.push_back(total);
      total += l;
    }
    all.resize(total);
  }
  checkMpi(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                       offsets.data(), MPI_CHAR, 0, session().comm),
           "MPI_Gatherv");
  std::string common; // the names every rank has, "\n"-separated
  if (session().rank == 0) {
    for (auto &[name, output] : named) {
      bool everywhere = true;
      for (int r = 1; r < session().worldSize && everywhere; ++r)
        everywhere = ("\n" + all.substr(offsets[r], lengths[r]))
                         .find("\n" + name + "\n") != std::string::npos;
      scalars.push_back({name, output, everywhere});
      if (everywhere)
        common += name + "\n";
    }
  }
  int commonLength = int(common.size());
  checkMpi(MPI_Bcast(&commonLength, 1, MPI_INT, 0, session().comm), "MPI_Bcast");
  common.resize(commonLength);
  checkMpi(MPI_Bcast(common.data(), commonLength, MPI_CHAR, 0, session().comm),
           "MPI_Bcast");
  for (size_t at = 0; at < common.size();) {
    size_t end = common.find('\n', at);
    std::string name = common.substr(at, end - at);
    for (auto &[n, output] : named)
      if (n == name) {
        commonOutputs.push_back(output);
        break;
      }
    at = end + 1;
  }
}

void RunMonitor::afterStep(int64_t done, double seconds) {
  if (options.checkFinite)
    checkFinite(done);
  if (options.saveEvery && done % options.saveEvery == 0)
    snapshot(done);
  ++windowSteps;
  bool log = options.logEvery && (done % options.logEvery == 0 ||
                                  done == options.totalSteps);
  if (log || !options.metricsFile.empty())
    report(done, log ? (now() - windowStart) / double(windowSteps) : seconds,
           log);
  if (log) {
    windowStart = now();
    windowSteps = 0;
  }
}

void RunMonitor::report(int64_t done, double stepSeconds, bool log) {
  // The averages: one reduction of every common value, to rank 0.
  std::vector<double> local, sum(commonOutputs.size());
  for (int output : commonOutputs)
    local.push_back(scalarOutput(output));
  if (!local.empty())
    checkMpi(MPI_Reduce(local.data(), sum.data(), int(local.size()),
                        MPI_DOUBLE, MPI_SUM, 0, session().comm),
             "MPI_Reduce");
  if (session().rank != 0)
    return;
  std::vector<double> values;
  size_t next = 0;
  for (const Scalar &s : scalars)
    values.push_back(s.everyRank ? sum[next++] / session().worldSize
                                 : scalarOutput(s.output));
  if (log) {
    double left = stepSeconds * double(options.totalSteps - done);
    std::string line = "step " + std::to_string(done) + "/" +
                       std::to_string(options.totalSteps);
    char text[160];
    snprintf(text, sizeof text, "  %.3f ms/step  %.1f steps/s  left %s",
             stepSeconds * 1e3, stepSeconds > 0 ? 1 / stepSeconds : 0.0,
             clock(left).c_str());
    line += text;
    for (size_t i = 0; i < scalars.size(); ++i) {
      snprintf(text, sizeof text, "  %s %.6g", scalars[i].name.c_str(),
               values[i]);
      line += text;
    }
    std::printf("%s\n", line.c_str());
    std::fflush(stdout);
  }
  if (metrics) {
    std::fprintf(metrics, "{\"step\": %lld, \"step_s\": %.9g",
                 (long long)done, stepSeconds);
    for (size_t i = 0; i < scalars.size(); ++i) {
      if (std::isfinite(values[i]))
        std::fprintf(metrics, ", \"%s\": %.17g", scalars[i].name.c_str(),
                     values[i]);
      else // JSON has no NaN or infinity
        std::fprintf(metrics, ", \"%s\": \"%s\"", scalars[i].name.c_str(),
                     std::isnan(values[i]) ? "nan"
                     : values[i] > 0       ? "inf"
                                           : "-inf");
    }
    std::fprintf(metrics, "}\n");
    std::fflush(metrics);
  }
}

void RunMonitor::checkFinite(int64_t done) {
  for (int i = 0; i < rankc_core_num_outputs(); ++i) {
    int dtype = rankc_core_output_dtype(i);
    if (!isFloatDType(dtype))
      continue;
    std::vector<char> host(outputBytes(i) + 1);
    rankc_core_get_output(i, host.data());
    size_t n = outputBytes(i) / npy::elementBytes(dtype);
    for (size_t k = 0; k < n; ++k) {
      double v = npy::loadElement(dtype, host.data(), k);
      if (!std::isfinite(v))
        fail("--check-finite: after step %lld (%lld steps done), output '%s' "
             "holds %s at element %zu",
             (long long)(done - 1), (long long)done,
             rankc_core_output_name(i, 0),
             std::isnan(v) ? "NaN" : v > 0 ? "+inf" : "-inf", k);
    }
  }
}

void RunMonitor::snapshot(int64_t done) {
  std::string dir = options.snapshotDir + "/step" + std::to_string(done) +
                    "/rank" + std::to_string(session().rank);
  std::vector<Snapshot> taken;
  for (int i = 0; i < rankc_core_num_outputs(); ++i) {
    Snapshot s;
    s.dtype = rankc_core_output_dtype(i);
    s.shape = outputShape(i);
    s.data.resize(outputBytes(i) + 1);
    rankc_core_get_output(i, s.data.data()); // the copy out: now
    for (int j = 0; const char *name = rankc_core_output_name(i, j); ++j) {
      Snapshot named = s;
      named.path = dir + "/" + name + ".npy";
      taken.push_back(std::move(named));
    }
  }
  std::lock_guard<std::mutex> lock(mutex);
  for (Snapshot &s : taken)
    queue.push_back(std::move(s));
  cv.notify_all();
}

void RunMonitor::writer() {
  std::unique_lock<std::mutex> lock(mutex);
  for (;;) {
    cv.wait(lock, [&] { return stop || !queue.empty(); });
    if (queue.empty())
      return; // stopped, everything written
    Snapshot s = std::move(queue.front());
    queue.pop_front();
    lock.unlock();
    makeFolders(s.path.substr(0, s.path.rfind('/')));
    std::string error;
    if (!npy::write(s.path, s.dtype, s.shape, s.data.data(), error))
      fail("--save-every: %s", error.c_str());
    lock.lock();
  }
}

void RunMonitor::finish() {
  if (thread.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex);
      stop = true;
    }
    cv.notify_all();
    thread.join();
  }
  if (metrics) {
    std::fclose(metrics);
    metrics = nullptr;
  }
}

} // namespace rankc::rt
