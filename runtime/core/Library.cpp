//===- Library.cpp - the C API of `rankc compile --emit lib` --------------===//
//
// OUT/lib/librankc_P.so exports these as rankc_P_* (the linker aliases each
// rankc_lib_X to rankc_P_X and hides everything else: Link.cpp), and
// OUT/include/rankc_P.h declares them. They are the core's calls with the
// error handling an application needs: arguments are checked before
// anything happens, and a bad one is an error code and a message
// (rankc_P_last_error), never an abort of the caller's process. A failed MPI
// operation or a message that never arrives still ends the job (fail()):
// the other ranks could not go on anyway.
//
//===----------------------------------------------------------------------===//

#include "core/Checkpoint.h"
#include "core/Core.h"
#include "rankc_core.h"
#include "rankc_runtime.h"

#include <cstdlib>
#include <string>

using namespace rankc::rt;

namespace {
enum class State { Down, Failed, Up };
State state = State::Down;
std::string lastError;

/// Runs `body`; an Error becomes the last error and status 1.
template <typename F> int guarded(const char *call, F body) {
  try {
    body();
    return 0;
  } catch (const Error &e) {
    lastError = std::string(call) + ": " + e.what();
  } catch (const std::bad_alloc &) {
    lastError = std::string(call) + ": out of host memory";
  }
  return 1;
}

void requireUp() {
  if (state != State::Up)
    raise("the program is not initialized (call init first%s)",
          state == State::Failed ? "; it failed" : "");
}

const char *dtypeName(int dtype) {
  static const char *names[] = {
#define RANKC_X(e, name, bytes, descr, ctype) name,
      RANKC_DTYPES(RANKC_X)
#undef RANKC_X
  };
  return dtype >= 0 && dtype < RANKC_DTYPE_COUNT ? names[dtype] : "?";
}

/// Accessors return a value, not a status: -1 or NULL for a bad index
/// (with the last error set).
template <typename T, typename F> T query(const char *call, T bad, F body) {
  T result = bad;
  if (guarded(call, [&] {
        requireUp();
        result = body();
      }))
    return bad;
  return result;
}
} // namespace

extern "C" {

const char *rankc_lib_last_error(void) { return lastError.c_str(); }

int rankc_lib_init(void) {
  return guarded("init", [] {
    if (state == State::Up)
      raise("the program is already initialized");
    double timeout = 0;
    if (const char *t = std::getenv("RANKC_TIMEOUT"))
      timeout = std::atof(t);
    state = State::Failed;
    rankc_core_init(nullptr, nullptr, timeout);
    state = State::Up;
  });
}

int rankc_lib_finalize(void) {
  return guarded("finalize", [] {
    if (state == State::Down)
      raise("the program is not initialized");
    state = State::Down;
    rankc_core_finalize();
  });
}

int rankc_lib_step(const void *const in[], void *const out[]) {
  return guarded("step", [&] {
    requireUp();
    int nIn = rankc_core_num_inputs(), nOut = rankc_core_num_outputs();
    if (nIn > 0 && !in)
      raise("the inputs array is NULL (the program has %d inputs)", nIn);
    if (nOut > 0 && !out)
      raise("the outputs array is NULL (the program has %d outputs)", nOut);
    // Every check before the first copy: a failed step changes nothing.
    for (int i = 0; i < nIn; ++i)
      if (!in[i] && !(rankc_core_input_is_state(i) && rankc_core_steps_done()))
        raise("input %d ('%s') is NULL: only an input carried from step to "
              "step may be left out, and only after the first step",
              i, rankc_core_input_name(i));
    for (int i = 0; i < nOut; ++i)
      if (!out[i])
        raise("output %d ('%s') is NULL", i, rankc_core_output_name(i, 0));
    for (int i = 0; i < nIn; ++i)
      if (in[i])
        rankc_core_set_input(i, in[i]);
    rankc_core_step();
    for (int i = 0; i < nOut; ++i)
      rankc_core_get_output(i, out[i]);
  });
}

int rankc_lib_save(const char *dir) {
  return guarded("save", [&] {
    requireUp();
    if (!dir || !*dir)
      raise("the folder is NULL or empty");
    saveRank(dir, rankc_core_steps_done());
  });
}

int rankc_lib_load(const char *dir) {
  return guarded("load", [&] {
    requireUp();
    if (!dir || !*dir)
      raise("the folder is NULL or empty");
    loadRank(dir);
  });
}

int rankc_lib_rank(void) {
  return query("rank", -1, [] { return rankc_core_rank(); });
}
int rankc_lib_world_size(void) {
  return query("world_size", -1, [] { return rankc_core_world_size(); });
}
int64_t rankc_lib_steps_done(void) {
  return query("steps_done", int64_t(-1),
               [] { return rankc_core_steps_done(); });
}
int64_t rankc_lib_step_count(void) {
  return query("step_count", int64_t(-1),
               [] { return rankc_core_steps_done(); });
}
int rankc_lib_num_inputs(void) {
  return query("num_inputs", -1, [] { return rankc_core_num_inputs(); });
}
int rankc_lib_num_outputs(void) {
  return query("num_outputs", -1, [] { return rankc_core_num_outputs(); });
}
const char *rankc_lib_input_name(int i) {
  return query("input_name", (const char *)nullptr,
               [&] { return rankc_core_input_name(i); });
}
const char *rankc_lib_input_dtype(int i) {
  return query("input_dtype", (const char *)nullptr,
               [&] { return dtypeName(rankc_core_input_dtype(i)); });
}
int rankc_lib_input_rank(int i) {
  return query("input_rank", -1, [&] { return rankc_core_input_rank(i); });
}
const int64_t *rankc_lib_input_shape(int i) {
  return query("input_shape", (const int64_t *)nullptr,
               [&] { return rankc_core_input_shape(i); });
}
int rankc_lib_input_is_state(int i) {
  return query("input_is_state", -1,
               [&] { return rankc_core_input_is_state(i); });
}
const char *rankc_lib_output_name(int i) {
  return query("output_name", (const char *)nullptr,
               [&] { return rankc_core_output_name(i, 0); });
}
const char *rankc_lib_output_alias(int i, int j) {
  return query("output_alias", (const char *)nullptr,
               [&] { return rankc_core_output_name(i, j); });
}
const char *rankc_lib_output_dtype(int i) {
  return query("output_dtype", (const char *)nullptr,
               [&] { return dtypeName(rankc_core_output_dtype(i)); });
}
int rankc_lib_output_rank(int i) {
  return query("output_rank", -1, [&] { return rankc_core_output_rank(i); });
}
const int64_t *rankc_lib_output_shape(int i) {
  return query("output_shape", (const int64_t *)nullptr,
               [&] { return rankc_core_output_shape(i); });
}

} // extern "C"
