//===- MemrefCopy.cpp - the one MLIR runtime helper generated code calls --===//
//
// finalize-memref-to-llvm lowers a memref.copy between buffers whose layouts
// are not both contiguous to a call of `memrefCopy` (normally from MLIR's
// c_runner_utils, which Debian does not ship as a library for linking into
// programs). Same ABI: element size and two unranked descriptors.
//
//===----------------------------------------------------------------------===//

#include <cstdint>
#include <cstring>
#include <vector>

namespace {
struct Unranked {
  int64_t rank;
  void *descriptor;
};
// {allocated, aligned, offset, sizes[rank], strides[rank]}
struct View {
  char *aligned;
  int64_t offset;
  const int64_t *sizes, *strides;
  explicit View(const Unranked &m) {
    auto *d = static_cast<char *>(m.descriptor);
    aligned = *reinterpret_cast<char **>(d + sizeof(void *));
    auto *ints = reinterpret_cast<const int64_t *>(d + 2 * sizeof(void *));
    offset = ints[0];
    sizes = ints + 1;
    strides = ints + 1 + m.rank;
  }
};
} // namespace

extern "C" void memrefCopy(int64_t elemSize, Unranked *src, Unranked *dst) {
  int64_t rank = src->rank;
  View s(*src), d(*dst);
  int64_t total = 1;
  for (int64_t i = 0; i < rank; ++i)
    total *= s.sizes[i];
  if (total == 0)
    return;
  std::vector<int64_t> index(rank, 0);
  int64_t so = s.offset, doff = d.offset;
  for (int64_t n = 0; n < total; ++n) {
    std::memcpy(d.aligned + doff * elemSize, s.aligned + so * elemSize,
                elemSize);
    // Odometer increment over the index, updating both offsets.
    for (int64_t axis = rank - 1; axis >= 0; --axis) {
      if (++index[axis] < s.sizes[axis]) {
        so += s.strides[axis];
        doff += d.strides[axis];
        break;
      }
      so -= s.strides[axis] * (s.sizes[axis] - 1);
      doff -= d.strides[axis] * (d.sizes[axis] - 1);
      index[axis] = 0;
    }
  }
}
