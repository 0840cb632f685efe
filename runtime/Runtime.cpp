//===- Runtime.cpp - MPI, .npy files, watchdog and trace for generated code ===//
//
// The process's main() lives here: it parses the command line, initializes
// MPI, reads the manifest that the compiler embedded, runs rankc_entry(),
// and writes the outputs only once the whole program has succeeded.
// Every MPI call is checked; any failure prints `error: rank R: ...` and
// aborts all ranks (MPI_Abort), so a run never hangs or half-succeeds.
//
//===----------------------------------------------------------------------===//

#include "rankc_runtime.h"
#include "Buffers.h"
#include "Npy.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <thread>
#include <vector>

namespace {

struct TensorInfo {
  std::string id; // input id, or the first output name
  std::vector<std::string> names; // outputs: every name
  int dtype = RANKC_F32;
  std::vector<int64_t> shape;
  int64_t elements() const {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    return n;
  }
};
struct EventInfo {
  std::string kind, node, tag;
};
struct Request {
  MPI_Request mpi = MPI_REQUEST_NULL;
  int event = -1;
  int64_t peer = -1;
  double started = 0;
  // For allreduces of f16/bf16 (reduced as f32) and mean: what to do after.
  std::vector<float> wideIn, wideOut;
  void *out = nullptr;
  int64_t count = 0;
  int dtype = RANKC_F32;
  int reduce = RANKC_SUM;
  bool active = false;
  // Staging in host memory, when MPI cannot take the program's buffers.
  void *staging = nullptr, *stagingOut = nullptr;
  void *unstageTo = nullptr; // the program's buffer the result goes to
  size_t bytes = 0;
};
struct TraceEvent {
  std::string name, category;
  double begin, end;
};

int rank = 0, worldSize = 1;
std::string programName, inputsDir, outputsDir, traceFile, statsFile,
    kernelStatsDir;
// --stats: where this rank's time went (seconds).
double computeTime = 0, blockedTime = 0, entryTime = 0;
double timeoutSeconds = 300;
std::vector<TensorInfo> inputs, outputs;
std::vector<EventInfo> events;
std::vector<std::vector<char>> staged; // output bytes, by output index
std::vector<Request> requests;
std::vector<TraceEvent> trace;
std::vector<double> partBegin;

using rankc::rt::fail;

void checkMpi(int rc, const char *what) {
  if (rc == MPI_SUCCESS)
    return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fail("%s failed: %.*s", what, len, text);
}

double now() { return MPI_Wtime(); }

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

void parseManifest() {
  std::istringstream in(rankc_manifest);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream l(line);
    std::string kind;
    l >> kind;
    if (kind == "program") {
      l >> programName;
    } else if (kind == "world_size") {
      int ws;
      l >> ws;
      if (ws != worldSize)
        fail("the program was compiled for %d ranks but runs on %d; use "
             "OUT/launch",
             ws, worldSize);
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
    } else if (kind == "event") {
      EventInfo e;
      int index;
      l >> index >> e.kind >> e.node;
      std::getline(l >> std::ws, e.tag);
      events.push_back(e);
    }
  }
  staged.resize(outputs.size());
}

// Reproducible inputs: splitmix64 seeded with FNV-1a(input id) ^ rank.
uint64_t splitmix(uint64_t &state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void fillRandom(const TensorInfo &t, void *data) {
  uint64_t state = 1469598103934665603ull;
  for (char c : t.id)
    state = (state ^ uint8_t(c)) * 1099511628211ull;
  state ^= uint64_t(rank);
  for (int64_t i = 0, n = t.elements(); i < n; ++i) {
    uint64_t r = splitmix(state);
    double u = double(r >> 11) / double(1ull << 53) * 2.0 - 1.0; // [-1, 1)
    int64_t k = int64_t(r % 17) - 8;                            // [-8, 8]
    npy::storeElement(t.dtype, data, i, u, k, (r & 1) != 0);
  }
}

void makeDirs(const std::string &path) {
  for (size_t i = 1; i <= path.size(); ++i)
    if (i == path.size() || path[i] == '/') {
      std::string prefix = path.substr(0, i);
      if (mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST)
        fail("cannot create folder '%s': %s", prefix.c_str(), strerror(errno));
    }
}

/// A free slot of the request table, started now for `event` with `peer`.
Request &newRequest(int64_t &handle, int event, int64_t peer) {
  handle = requests.size();
  for (size_t i = 0; i < requests.size(); ++i)
    if (!requests[i].active) {
      handle = i;
      break;
    }
  if (handle == int64_t(requests.size()))
    requests.emplace_back();
  Request &r = requests[handle];
  r = Request();
  r.active = true;
  r.event = event;
  r.peer = peer;
  r.started = now();
  return r;
}

/// MPI counts are ints: larger messages are refused with a clear error.
int messageSize(int64_t bytes, int event) {
  if (bytes > INT32_MAX)
    fail("%s is %lld bytes, more than one MPI message can carry (2^31 - 1)",
         describe(event, -1).c_str(), (long long)bytes);
  return int(bytes);
}

int64_t resolvePeer(int64_t peer, int32_t relative) {
  if (relative)
    return (((peer % worldSize) + worldSize) + rank) % worldSize;
  return peer;
}

MPI_Op mpiOp(int reduce, int dtype) {
  if (dtype == RANKC_BOOL)
    return reduce == RANKC_MIN ? MPI_LAND : MPI_LOR;
  switch (reduce) {
  case RANKC_PROD: return MPI_PROD;
  case RANKC_MAX: return MPI_MAX;
  case RANKC_MIN: return MPI_MIN;
  default: return MPI_SUM;
  }
}

MPI_Datatype mpiType(int dtype) {
  switch (dtype) {
  case RANKC_BOOL: return MPI_C_BOOL;
  case RANKC_I8: return MPI_INT8_T;
  case RANKC_I32: return MPI_INT32_T;
  case RANKC_I64: return MPI_INT64_T;
  case RANKC_F64: return MPI_DOUBLE;
  default: return MPI_FLOAT; // f32, and f16/bf16 widened to f32
  }
}

std::string jsonEscape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\';
    out += c;
  }
  return out;
}

void writeTrace() {
  // Each rank serializes its events; rank 0 gathers and writes one file.
  std::string mine;
  char buf[512];
  for (const TraceEvent &e : trace) {
    snprintf(buf, sizeof buf,
             "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,"
             "\"tid\":0,\"ts\":%.3f,\"dur\":%.3f},\n",
             jsonEscape(e.name).c_str(), e.category.c_str(), rank,
             e.begin * 1e6, (e.end - e.begin) * 1e6);
    mine += buf;
  }
  snprintf(buf, sizeof buf,
           "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"args\":{"
           "\"name\":\"rank %d (%s)\"}},\n",
           rank, rank, jsonEscape(programName).c_str());
  mine += buf;
  int len = mine.size();
  std::vector<int> lens(worldSize), offsets(worldSize);
  checkMpi(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0,
                      MPI_COMM_WORLD),
           "MPI_Gather (trace)");
  int total = 0;
  for (int r = 0; r < worldSize; ++r) {
    offsets[r] = total;
    total += lens[r];
  }
  std::string all(rank == 0 ? total : 0, ' ');
  checkMpi(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(),
                       offsets.data(), MPI_CHAR, 0, MPI_COMM_WORLD),
           "MPI_Gatherv (trace)");
  if (rank != 0)
    return;
  FILE *f = fopen(traceFile.c_str(), "w");
  if (!f)
    fail("cannot write trace '%s': %s", traceFile.c_str(), strerror(errno));
  if (!all.empty() && all.size() >= 2)
    all.resize(all.size() - 2); // the last ",\n"
  fprintf(f, "{\"traceEvents\":[\n%s\n],\"displayTimeUnit\":\"ms\"}\n",
          all.c_str());
  fclose(f);
}

// Rank 0 writes {"ranks": [{"rank", "wall", "compute", "blocked"}...]}:
// wall is the program's run, compute its parts, blocked its time in waits
// (communication left exposed).
void writeStats() {
  double mine[3] = {entryTime, computeTime, blockedTime};
  std::vector<double> all(3 * worldSize);
  checkMpi(MPI_Gather(mine, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0,
                      MPI_COMM_WORLD),
           "MPI_Gather (stats)");
  if (rank != 0)
    return;
  FILE *f = fopen(statsFile.c_str(), "w");
  if (!f)
    fail("cannot write stats '%s': %s", statsFile.c_str(), strerror(errno));
  fprintf(f, "{\"buffers\": \"%s\", \"ranks\": [",
          rankc::rt::describeBuffers().c_str());
  for (int r = 0; r < worldSize; ++r)
    fprintf(f, "%s{\"rank\": %d, \"wall\": %.6f, \"compute\": %.6f, "
               "\"blocked\": %.6f}",
            r ? ", " : "", r, all[3 * r], all[3 * r + 1], all[3 * r + 2]);
  fprintf(f, "]}\n");
  fclose(f);
}

void usage() {
  fprintf(stderr, "usage: %s [--inputs IN] [--outputs RES] [--timeout SECONDS] "
                  "[--trace FILE] [--stats FILE] [--kernel-stats DIR]\n", programName.c_str());
}

} // namespace

namespace rankc::rt {
void progressCommunication() {
  // One test drives MPICH's progress engine for every request; which one
  // completes first does not matter (rankc_rt_wait tests its own again).
  for (Request &r : requests)
    if (r.active && r.mpi != MPI_REQUEST_NULL) {
      int done = 0;
      checkMpi(MPI_Test(&r.mpi, &done, MPI_STATUS_IGNORE),
               ("MPI_Test of " + describe(r.event, r.peer)).c_str());
      return;
    }
}

void fail(const char *fmt, ...) {
  char msg[2048];
  va_list args;
  va_start(args, fmt);
  vsnprintf(msg, sizeof msg, fmt, args);
  va_end(args);
  int up = 0, down = 0;
  MPI_Initialized(&up);
  MPI_Finalized(&down);
  // Before main() (a GPU module loaded by a constructor) only the launcher
  // knows the rank.
  const char *launcherRank = std::getenv("PMI_RANK");
  int who = up || !launcherRank ? rank : std::atoi(launcherRank);
  fprintf(stderr, "error: rank %d (%s): %s\n", who,
          program_invocation_short_name,
          msg);
  fflush(stderr);
  if (up && !down) {
    // Give mpiexec's output forwarding time to pass the message on before
    // the abort tears the job down (otherwise it is sometimes lost).
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  // Not exit(): destructors (a GPU module's unload) must not run on a
  // half-initialized driver.
  fflush(stdout);
  std::_Exit(1);
}
} // namespace rankc::rt

extern "C" {

void rankc_rt_input(int32_t index, int64_t data) {
  const TensorInfo &t = inputs.at(index);
  size_t bytes = t.elements() * npy::elementBytes(t.dtype);
  // Read on the host; device buffers are filled from a staging copy.
  void *buffer = reinterpret_cast<void *>(data);
  void *host = rankc::rt::buffersOnDevice() ? rankc::rt::allocStaging(bytes)
                                            : buffer;
  if (inputsDir.empty()) {
    fillRandom(t, host);
  } else {
    std::string path =
        inputsDir + "/rank" + std::to_string(rank) + "/" + t.id + ".npy";
    std::string error;
    if (!npy::read(path, t.dtype, t.shape, host, error))
      fail("input '%s': %s", t.id.c_str(), error.c_str());
  }
  if (host != buffer) {
    rankc::rt::copyFromHost(buffer, host, bytes);
    rankc::rt::freeStaging(host);
  }
}

void rankc_rt_output(int32_t index, int64_t data) {
  const TensorInfo &t = outputs.at(index);
  size_t bytes = t.elements() * npy::elementBytes(t.dtype);
  staged.at(index).resize(bytes);
  rankc::rt::copyToHost(staged[index].data(), reinterpret_cast<void *>(data),
                        bytes);
}

int64_t rankc_rt_isend(int64_t data, int64_t bytes, int64_t peer,
                       int32_t relative, int32_t mpiTag, int32_t event) {
  int64_t handle;
  Request &r = newRequest(handle, event, resolvePeer(peer, relative));
  void *buffer = reinterpret_cast<void *>(data);
  if (!rankc::rt::mpiTakesBuffers()) {
    r.staging = rankc::rt::allocStaging(bytes);
    rankc::rt::copyToHost(r.staging, buffer, bytes);
    buffer = r.staging;
  }
  checkMpi(MPI_Isend(buffer, messageSize(bytes, event),
                     MPI_BYTE, int(r.peer), mpiTag, MPI_COMM_WORLD, &r.mpi),
           ("MPI_Isend of " + describe(event, r.peer)).c_str());
  return handle;
}

int64_t rankc_rt_irecv(int64_t data, int64_t bytes, int64_t peer,
                       int32_t relative, int32_t mpiTag, int32_t event) {
  int64_t handle;
  Request &r = newRequest(handle, event, resolvePeer(peer, relative));
  void *buffer = reinterpret_cast<void *>(data);
  if (!rankc::rt::mpiTakesBuffers()) {
    r.staging = rankc::rt::allocStaging(bytes);
    r.unstageTo = buffer;
    r.bytes = bytes;
    buffer = r.staging;
  }
  checkMpi(MPI_Irecv(buffer, messageSize(bytes, event),
                     MPI_BYTE, int(r.peer), mpiTag, MPI_COMM_WORLD, &r.mpi),
           ("MPI_Irecv of " + describe(event, r.peer)).c_str());
  return handle;
}

int64_t rankc_rt_iallreduce(int64_t in, int64_t out, int64_t count,
                            int32_t dtype, int32_t reduce, int32_t event) {
  int64_t handle;
  Request &r = newRequest(handle, event, -1);
  r.out = reinterpret_cast<void *>(out);
  r.count = count;
  r.dtype = dtype;
  r.reduce = reduce;
  const void *send = reinterpret_cast<const void *>(in);
  void *recv = r.out;
  if (rankc::rt::buffersOnDevice()) {
    // Reduced on the host: the mean's division and f16/bf16 widening need
    // the values there, and a reduction moves every byte once anyway.
    size_t bytes = count * npy::elementBytes(dtype);
    r.staging = rankc::rt::allocStaging(bytes);
    r.stagingOut = rankc::rt::allocStaging(bytes);
    rankc::rt::copyToHost(r.staging, send, bytes);
    r.unstageTo = r.out;
    r.bytes = bytes;
    send = r.staging;
    recv = r.out = r.stagingOut;
  }
  if (dtype == RANKC_F16 || dtype == RANKC_BF16) {
    r.wideIn.resize(count);
    r.wideOut.resize(count);
    for (int64_t i = 0; i < count; ++i)
      r.wideIn[i] = float(npy::loadElement(dtype, send, i));
    send = r.wideIn.data();
    recv = r.wideOut.data();
  }
  if (count > INT32_MAX)
    fail("%s has %lld elements, more than one MPI call can carry",
         describe(event, -1).c_str(), (long long)count);
  checkMpi(MPI_Iallreduce(send, recv, int(count), mpiType(dtype),
                          mpiOp(reduce, dtype), MPI_COMM_WORLD, &r.mpi),
           ("MPI_Iallreduce of " + describe(event, -1)).c_str());
  return handle;
}

void rankc_rt_wait(int64_t handle) {
  Request &r = requests.at(handle);
  // Poll, so that a message that never completes ends the run with a clear
  // message instead of a hang.
  double deadline = now() + timeoutSeconds;
  int done = 0;
  double blockedFrom = now();
  for (unsigned spins = 0;; ++spins) {
    checkMpi(MPI_Test(&r.mpi, &done, MPI_STATUS_IGNORE),
             ("MPI_Test of " + describe(r.event, r.peer)).c_str());
    if (done)
      break;
    if (now() > deadline)
      fail("timed out after %.0f s waiting for %s", timeoutSeconds,
           describe(r.event, r.peer).c_str());
    if (spins > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  blockedTime += now() - blockedFrom;
  if (r.out && (r.dtype == RANKC_F16 || r.dtype == RANKC_BF16 ||
                r.reduce == RANKC_MEAN)) {
    for (int64_t i = 0; i < r.count; ++i) {
      double v = r.wideOut.empty() ? npy::loadElement(r.dtype, r.out, i)
                                   : r.wideOut[i];
      if (r.reduce == RANKC_MEAN)
        v /= worldSize;
      npy::storeElement(r.dtype, r.out, i, v, int64_t(v), v != 0);
    }
  }
  // Staged: the result goes to the program's buffer, the staging is freed.
  if (r.unstageTo)
    rankc::rt::copyFromHost(r.unstageTo, r.stagingOut ? r.stagingOut : r.staging,
                            r.bytes);
  rankc::rt::freeStaging(r.staging);
  rankc::rt::freeStaging(r.stagingOut);
  r.staging = r.stagingOut = r.unstageTo = nullptr;
  if (!traceFile.empty() && r.event >= 0)
    trace.push_back({describe(r.event, r.peer), events[r.event].kind,
                     r.started, now()});
  r.active = false;
}

void rankc_rt_part_begin(int32_t part) {
  if (partBegin.size() <= size_t(part))
    partBegin.resize(part + 1);
  partBegin[part] = now();
}

void rankc_rt_part_end(int32_t part) {
  computeTime += now() - partBegin[part];
  if (!traceFile.empty())
    trace.push_back({"part " + std::to_string(part), "compute",
                     partBegin[part], now()});
}

} // extern "C"

int main(int argc, char **argv) {
  programName = argv[0];
  if (const char *t = std::getenv("RANKC_TIMEOUT")) // the command line wins
    timeoutSeconds = std::atof(t);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        usage();
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
    else if (a == "--timeout")
      timeoutSeconds = std::atof(value().c_str());
    else {
      usage();
      return 2;
    }
  }
  MPI_Init(&argc, &argv);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  checkMpi(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
  checkMpi(MPI_Comm_size(MPI_COMM_WORLD, &worldSize), "MPI_Comm_size");
  rankc::rt::initBuffers(rank);
  if (!kernelStatsDir.empty())
    rankc::rt::enableKernelTiming();
  parseManifest();

  checkMpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  double entryStart = now();
  rankc_entry();
  for (size_t i = 0; i < requests.size(); ++i)
    if (requests[i].active)
      rankc_rt_wait(i);
  entryTime = now() - entryStart;

  if (!outputsDir.empty()) {
    std::string dir = outputsDir + "/rank" + std::to_string(rank);
    makeDirs(dir);
    for (size_t i = 0; i < outputs.size(); ++i)
      for (const std::string &name : outputs[i].names) {
        std::string error;
        if (!npy::write(dir + "/" + name + ".npy", outputs[i].dtype,
                        outputs[i].shape, staged[i].data(), error))
          fail("output '%s': %s", name.c_str(), error.c_str());
      }
  }
  if (!traceFile.empty())
    writeTrace();
  if (!statsFile.empty())
    writeStats();
  if (!kernelStatsDir.empty()) {
    makeDirs(kernelStatsDir);
    rankc::rt::writeKernelStats(kernelStatsDir + "/rank" +
                                std::to_string(rank) + ".json");
  }
  checkMpi(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier");
  MPI_Finalize();
  return 0;
}
