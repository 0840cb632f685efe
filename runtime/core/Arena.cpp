//===- Arena.cpp - step arenas for the buffers of generated code ----------===//

#include "core/Arena.h"
#include "core/Buffers.h"

#include <algorithm>

namespace rankc::rt {

namespace {
constexpr size_t kAlign = 256;
constexpr size_t kMinBlock = size_t(1) << 20;
size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }
} // namespace

void *Arena::allocate(size_t bytes) {
  bytes = roundUp(std::max<size_t>(bytes, 1), kAlign);
  if (blocks.empty() || used + bytes > blocks.back().size) {
    // Blocks grow geometrically, so a step needs O(log) of them at first.
    size_t size = std::max({bytes, kMinBlock,
                            blocks.empty() ? 0 : 2 * blocks.back().size});
    auto *data = static_cast<char *>(systemAlloc(size + kAlign));
    if (!data)
      fail("out of memory: could not allocate %zu bytes for a step's buffers",
           size);
    blocks.push_back({data, size + kAlign});
    reservedBytes += size + kAlign;
    // The block's own alignment is the system's: align its start.
    used = roundUp(reinterpret_cast<uintptr_t>(data), kAlign) -
           reinterpret_cast<uintptr_t>(data);
  }
  char *p = blocks.back().data + used;
  used += bytes;
  stepBytes += bytes;
  peakStep = std::max(peakStep, stepBytes);
  return p;
}

void Arena::reset() {
  stepBytes = 0;
  if (blocks.size() > 1) {
    size_t total = reservedBytes;
    release();
    char *data = static_cast<char *>(systemAlloc(total));
    if (!data)
      fail("out of memory: could not allocate %zu bytes for a step's buffers",
           total);
    blocks.push_back({data, total});
    reservedBytes = total;
  }
  used = blocks.empty() ? 0
                        : roundUp(reinterpret_cast<uintptr_t>(blocks[0].data),
                                  kAlign) -
                              reinterpret_cast<uintptr_t>(blocks[0].data);
}

void Arena::release() {
  for (Block &b : blocks)
    systemFree(b.data);
  blocks.clear();
  used = 0;
  reservedBytes = 0;
}

bool Arena::contains(const void *p) const {
  auto *c = static_cast<const char *>(p);
  for (const Block &b : blocks)
    if (c >= b.data && c < b.data + b.size)
      return true;
  return false;
}

void beginStepArenas(StepArenas &s, int64_t step,
                     std::vector<std::pair<void **, size_t>> &carried) {
  int reuse = int(step % 2), other = 1 - reuse;
  for (auto &[pointer, bytes] : carried)
    if (*pointer && s.arenas[reuse].contains(*pointer)) {
      void *moved = s.arenas[other].allocate(bytes);
      s.copy(moved, *pointer, bytes);
      *pointer = moved;
    }
  s.arenas[reuse].reset();
  s.current = reuse;
}

} // namespace rankc::rt
