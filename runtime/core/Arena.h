//===- Arena.h - step arenas for the buffers of generated code --*- C++ -*-===//
//
// Generated code allocates every buffer it needs (memref.alloc on the CPU,
// gpu.alloc on the GPU) and frees none. Over many steps that would grow
// without bound, so the runtime hands those allocations out of two arenas
// that take turns: step k allocates from arena k % 2, which is reset (in
// O(1), its memory kept) when step k + 2 begins. A value of step k that is
// carried into step k + 1 as state (or written as an output after the last
// step) therefore stays valid without a copy. Only a value that outlives
// two steps unchanged (state passed through as it is) is copied once, into
// the other arena, before its own arena is reused.
//
// After the first steps the arenas hold one block each, big enough for a
// whole step: a step allocates nothing from the system (no malloc, no
// cuMemAlloc), and memory stays flat however many steps run.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_RUNTIME_ARENA_H
#define RANKC_RUNTIME_ARENA_H

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rankc::rt {

/// A bump allocator over blocks from `systemAlloc`.
class Arena {
public:
  using AllocFn = void *(*)(size_t);
  using FreeFn = void (*)(void *);
  Arena(AllocFn systemAlloc, FreeFn systemFree)
      : systemAlloc(systemAlloc), systemFree(systemFree) {}
  ~Arena() { release(); }
  Arena(const Arena &) = delete;
  Arena &operator=(const Arena &) = delete;

  /// 256-byte aligned (enough for any vector load and cuBLAS).
  void *allocate(size_t bytes);
  /// Forgets every allocation. If the last round needed several blocks,
  /// they are replaced by one of their total size.
  void reset();
  /// Returns every block to the system.
  void release();
  bool contains(const void *p) const;
  /// Bytes held from the system.
  size_t reserved() const { return reservedBytes; }
  /// The most bytes handed out between two resets (a step's buffers, as
  /// plan.json's `step_bytes` counts them, plus carried values moved in).
  size_t peakStepBytes() const { return peakStep; }
  /// Where the next allocation starts, for a step that is replayed
  /// (StepReplay.cpp) rather than run: its allocations are made again by
  /// setting the mark the recorded run left, so that later ones (a carried
  /// value's copy) do not overlap them.
  struct Mark {
    const char *block = nullptr;
    size_t blocks = 0, used = 0;
    bool operator==(const Mark &o) const {
      return block == o.block && blocks == o.blocks && used == o.used;
    }
  };
  Mark mark() const {
    return {blocks.empty() ? nullptr : blocks.back().data, blocks.size(), used};
  }
  void restore(const Mark &m) { used = m.used; }

private:
  struct Block {
    char *data;
    size_t size;
  };
  AllocFn systemAlloc;
  FreeFn systemFree;
  std::vector<Block> blocks;
  size_t used = 0; // in blocks.back()
  size_t reservedBytes = 0;
  size_t stepBytes = 0, peakStep = 0; // since the last reset; the most
};

/// The two arenas of one kind of memory (host or device) and the copy that
/// moves a value between them.
struct StepArenas {
  StepArenas(Arena::AllocFn a, Arena::FreeFn f,
             void (*copy)(void *, const void *, size_t))
      : arenas{Arena(a, f), Arena(a, f)}, copy(copy) {}
  Arena arenas[2];
  void (*copy)(void *dst, const void *src, size_t bytes);
  int current = 0;
  Arena &now() { return arenas[current]; }
};

/// Called before step `step` runs: every carried buffer in `carried` (with
/// its size) that lives in the arena the step is about to reuse is copied
/// into the other one (the pointer is updated), then that arena is reset.
void beginStepArenas(StepArenas &arenas, int64_t step,
                     std::vector<std::pair<void **, size_t>> &carried);

} // namespace rankc::rt

#endif // RANKC_RUNTIME_ARENA_H
