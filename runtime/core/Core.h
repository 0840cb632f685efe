//===- Core.h - what the runtime's parts share -----------------*- C++ -*-===//
//
// Errors, MPI checks and the clock (Support.cpp); the session's messages
// (Messages.cpp) and reports (Report.cpp). The run itself is the session
// (Session.h). Internal: programs see rankc_runtime.h (generated code) and
// rankc_core.h (embedders).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_CORE_H
#define RANKC_RUNTIME_CORE_H

#include "core/Manifest.h"

#include <mpi.h>

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace rankc::rt {

/// Fills `bytes` of a receive's buffer with its event's `fill` (no peer).
void fillBuffer(void *buffer, size_t bytes, const EventInfo &e);

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

double now();
void checkMpi(int rc, const char *what);
std::string describe(int event, int64_t peer);

/// Messages.cpp: completes every request still open (the end of a step).
void waitAll();

/// Report.cpp: collective (every rank calls them); rank 0 writes the file.
void writeTrace(const std::string &path);
void writeStats(const std::string &path);

} // namespace rankc::rt

#endif // RANKC_RUNTIME_CORE_H
