//===- Support.cpp - errors, MPI checks, folders, the run's generator -----===//

#include "core/Buffers.h"
#include "core/Core.h"
#include "core/Session.h"
#include "tooling/Npy.h"
#include "rankc_runtime.h"

#include <mpi.h>

#include <cerrno>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>
#include <thread>

namespace rankc::rt {

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
  const std::vector<EventInfo> &events = session().events();
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
  int who = up || !launcherRank ? session().rank : std::atoi(launcherRank);
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
