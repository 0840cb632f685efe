//===- ArenaTest.cpp - the runtime's step arenas over many steps ----------===//
//
// The protocol of runtime/core/Session.cpp (carried values moved out, then the
// arena of the step reset; allocations from it), driven for many steps:
// carried values keep their contents, memory stops growing after the first
// steps, and (under the sanitizer build) nothing leaks.
//
//===----------------------------------------------------------------------===//

#include "core/Arena.h"

#include <gtest/gtest.h>

#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace rankc::rt {
// Arena.cpp reports running out of memory through the runtime's fail().
void fail(const char *fmt, ...) {
  char msg[256];
  va_list args;
  va_start(args, fmt);
  vsnprintf(msg, sizeof msg, fmt, args);
  va_end(args);
  fprintf(stderr, "fail: %s\n", msg);
  std::abort();
}
} // namespace rankc::rt

using namespace rankc::rt;

namespace {
void copy(void *dst, const void *src, size_t n) { std::memcpy(dst, src, n); }

TEST(Arena, AlignedAndGrowing) {
  Arena a(std::malloc, std::free);
  for (size_t bytes : {1, 3, 1000, 5 << 20, 17}) {
    void *p = a.allocate(bytes);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 256, 0u);
    std::memset(p, 1, bytes);
    EXPECT_TRUE(a.contains(p));
  }
  size_t before = a.reserved();
  a.reset(); // several blocks become one of their total size
  EXPECT_EQ(a.reserved(), before);
  void *big = a.allocate(5 << 20);
  EXPECT_TRUE(a.contains(big));
  EXPECT_EQ(a.reserved(), before); // fits: no growth
}

TEST(Arena, StateOverManySteps) {
  StepArenas s(std::malloc, std::free, copy);
  constexpr size_t n = 1 << 16; // doubles: 512 KiB of state
  // `x` is carried: each step computes x + 1 into a fresh buffer. `kept`
  // is carried unchanged from step 0 on (a value that outlives its arena).
  double *x = nullptr;
  void *kept = nullptr;
  size_t reserved = 0;
  for (int64_t step = 0; step < 1000; ++step) {
    std::vector<std::pair<void **, size_t>> carried{
        {reinterpret_cast<void **>(&x), n * sizeof(double)},
        {&kept, n * sizeof(double)}};
    beginStepArenas(s, step, carried);
    auto *next = static_cast<double *>(s.now().allocate(n * sizeof(double)));
    s.now().allocate(3 * n); // temporaries of the step
    for (size_t i = 0; i < n; ++i)
      next[i] = (x ? x[i] : double(i)) + 1;
    if (!kept)
      kept = next;
    x = next;
    if (step == 3)
      reserved = s.arenas[0].reserved() + s.arenas[1].reserved();
    if (step > 3) {
      ASSERT_EQ(s.arenas[0].reserved() + s.arenas[1].reserved(), reserved)
          << "step " << step;
    }
  }
  for (size_t i = 0; i < n; i += 4099) {
    EXPECT_EQ(x[i], double(i) + 1000);
    EXPECT_EQ(static_cast<double *>(kept)[i], double(i) + 1);
  }
  s.arenas[0].release();
  s.arenas[1].release();
}

// A replayed step (StepReplay.cpp) allocates nothing itself: restoring the
// mark its recording left puts later allocations where they would have
// gone had the step run, past the step's buffers.
TEST(Arena, MarkRestoresARecordedStep) {
  Arena a(std::malloc, std::free);
  a.allocate(100); // a block exists, as in every step after the first
  a.reset();
  Arena::Mark start = a.mark();
  char *first = static_cast<char *>(a.allocate(1000));
  a.allocate(3000);
  Arena::Mark end = a.mark();
  EXPECT_EQ(end.block, start.block);
  EXPECT_EQ(end.blocks, 1u);
  EXPECT_FALSE(end == start);
  char *after = static_cast<char *>(a.allocate(10));
  a.reset();
  EXPECT_TRUE(a.mark() == start); // the next step starts where this one did
  a.restore(end);                 // ... and is a replay
  EXPECT_EQ(static_cast<char *>(a.allocate(10)), after);
  EXPECT_GE(after, first + 4000);
}
} // namespace
