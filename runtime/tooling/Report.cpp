//===- Report.cpp - --trace and --stats: what every rank did --------------===//
//
// Both gather every rank's records on rank 0, which writes one file.
//
//===----------------------------------------------------------------------===//

#include "core/Buffers.h"
#include "core/Arena.h"
#include "core/Core.h"
#include "core/Session.h"
#include "core/StepReplay.h"

#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

namespace rankc::rt {

namespace {
std::string jsonEscape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

/// Every rank's `mine` on rank 0, concatenated in rank order.
std::string gatherText(const std::string &mine, const char *what) {
  int len = mine.size();
  std::vector<int> lens(session().worldSize), offsets(session().worldSize);
  checkMpi(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0,
                      session().comm),
           what);
  int total = 0;
  for (int r = 0; r < session().worldSize; ++r) {
    offsets[r] = total;
    total += lens[r];
  }
  std::string all(session().rank == 0 ? total : 0, ' ');
  checkMpi(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(),
                       offsets.data(), MPI_CHAR, 0, session().comm),
           what);
  return all;
}

// Non-blocking, and regular files only: a FIFO nobody reads would hang the
// rank here, after its steps, where no watchdog looks.
FILE *openReport(const std::string &path, const char *what) {
  struct stat st;
  if (stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
    fail("cannot write %s '%s': not a regular file", what, path.c_str());
  int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_NONBLOCK, 0644);
  if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
    close(fd);
    fail("cannot write %s '%s': not a regular file", what, path.c_str());
  }
  FILE *f = fd >= 0 ? fdopen(fd, "w") : nullptr;
  if (!f)
    fail("cannot write %s '%s': %s", what, path.c_str(), strerror(errno));
  return f;
}

double median(std::vector<double> v) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string timesJson(const StepTimes &t) {
  char buf[160];
  snprintf(buf, sizeof buf, "\"wall\": %.6f, \"compute\": %.6f, \"blocked\": %.6f",
           t.wall, t.compute, t.blocked);
  return buf;
}
/// ", \"buckets\": [...]": each DDP bucket's reduction, what the machine
/// model predicted (--bucket-cap-mb auto) and the mean measured over the
/// steps that ran it (MPI's; NCCL's waits are the GPU's, not the host's),
/// in seconds into the step; "" for a program without buckets.
std::string bucketsJson() {
  std::string out;
  const std::vector<EventInfo> &events = session().program.events;
  char buf[256];
  for (size_t e = 0; e < events.size(); ++e) {
    if (events[e].bucket < 0)
      continue;
    out += out.empty() ? "" : ", ";
    snprintf(buf, sizeof buf, "{\"index\": %d, \"event\": %zu",
             events[e].bucket, e);
    out += buf;
    const auto &p = events[e].predicted;
    if (p.known) {
      snprintf(buf, sizeof buf,
               ", \"predicted\": {\"ready\": %.6f, \"start\": %.6f, "
               "\"reduce\": %.6f, \"end\": %.6f, \"exposed\": %.6f}",
               p.ready, p.start, p.reduce, p.start + p.reduce, p.exposed);
      out += buf;
    }
    auto it = session().bucketTimes.find(int(e));
    if (it != session().bucketTimes.end() && it->second.steps > 0) {
      const BucketTimes &m = it->second;
      double n = double(m.steps);
      snprintf(buf, sizeof buf,
               ", \"measured\": {\"start\": %.6f, \"end\": %.6f, "
               "\"exposed\": %.6f, \"steps\": %lld}",
               m.start / n, m.end / n, m.exposed / n, (long long)m.steps);
      out += buf;
    }
    out += "}";
  }
  return out.empty() ? "" : ", \"buckets\": [" + out + "]";
}
} // namespace

void writeTrace(const std::string &path) {
  // Parts and messages on thread 0; steps (which enclose them) on thread 1;
  // the machine model's predicted bucket reductions on thread 2.
  std::string mine;
  char buf[512];
  bool predicted = false;
  for (const TraceEvent &e : session().trace) {
    int tid = e.category == "step" ? 1 : e.category == "predicted" ? 2 : 0;
    predicted |= tid == 2;
    snprintf(buf, sizeof buf,
             "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,"
             "\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f},\n",
             jsonEscape(e.name).c_str(), e.category.c_str(), session().rank,
             tid, e.begin * 1e6, (e.end - e.begin) * 1e6);
    mine += buf;
  }
  if (predicted) {
    snprintf(buf, sizeof buf,
             "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":2,"
             "\"args\":{\"name\":\"predicted (machine model)\"}},\n",
             session().rank);
    mine += buf;
  }
  snprintf(buf, sizeof buf,
           "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{"
           "\"name\":\"rank %d (%s)\"}},\n",
           session().rank, session().rank, jsonEscape(session().program.program).c_str());
  mine += buf;
  std::string all = gatherText(mine, "MPI_Gather (trace)");
  if (session().rank != 0)
    return;
  FILE *f = openReport(path, "trace");
  if (all.size() >= 2)
    all.resize(all.size() - 2); // the last ",\n"
  fprintf(f, "{\"traceEvents\":[\n%s\n],\"displayTimeUnit\":\"ms\"}\n",
          all.c_str());
  fclose(f);
}

// {"buffers", "allreduce", "replay", "steps", "ranks": [{"rank", "wall", "compute", "blocked",
//  "median": {...}, "max_rss_kb", "buffer_bytes", "device_used_bytes"
//  (GPU memory in use at the end, by every process on the GPU),
//  "device_used_at_start_bytes" (the same before any buffer: the context,
//  MPI, NCCL), "device_used_after_first_step_bytes",
//  "step_bytes_peak" (the most a step took from its arena: plan.json's
//  memory.step_bytes, plus carried values moved in), "scratch_bytes" (the
//  block of the step's planned buffers: plan.json's memory.scratch_bytes),
//  "per_step": [{...}...]}]}:
// wall is the program's run (all steps), compute its parts, blocked its time
// in waits (communication left exposed).
void writeStats(const std::string &path) {
  StepTimes total;
  std::vector<double> walls, computes, blocks;
  std::string perStep;
  for (const StepTimes &t : session().stepTimes) {
    total.wall += t.wall;
    total.compute += t.compute;
    total.blocked += t.blocked;
    walls.push_back(t.wall);
    computes.push_back(t.compute);
    blocks.push_back(t.blocked);
    perStep += (perStep.empty() ? "{" : ", {") + timesJson(t) + "}";
  }
  StepTimes med{median(walls), median(computes), median(blocks)};
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  const StepArenas &arenas = programArenas();
  size_t stepPeak = std::max(arenas.arenas[0].peakStepBytes(),
                             arenas.arenas[1].peakStepBytes());
  char buf[480];
  snprintf(buf, sizeof buf,
           ", \"max_rss_kb\": %ld, \"buffer_bytes\": %zu, "
           "\"device_used_bytes\": %zu, \"device_used_at_start_bytes\": %zu, "
           "\"device_used_after_first_step_bytes\": %zu, "
           "\"step_bytes_peak\": %zu, \"scratch_bytes\": %zu",
           usage.ru_maxrss, bufferBytesHeld(), deviceBytesInUse(),
           session().deviceBytesAtStart, session().deviceBytesAfterFirstStep,
           stepPeak, session().scratchBytes());
  std::string mine = "{\"rank\": " + std::to_string(session().rank) + ", " +
                     timesJson(total) + ", \"median\": {" + timesJson(med) +
                     "}" + buf + bucketsJson() + ", \"per_step\": [" +
                     perStep + "]}";
  if (session().rank != session().worldSize - 1)
    mine += ", ";
  std::string all = gatherText(mine, "MPI_Gather (stats)");
  if (session().rank != 0)
    return;
  FILE *f = openReport(path, "stats");
  fprintf(f,
          "{\"buffers\": \"%s\", \"allreduce\": \"%s\", \"replay\": \"%s\", "
          "\"steps\": %zu, \"ranks\": [%s]}\n",
          describeBuffers().c_str(), describeCollectives().c_str(),
          jsonEscape(describeReplay()).c_str(), session().stepTimes.size(), all.c_str());
  fclose(f);
}

} // namespace rankc::rt
