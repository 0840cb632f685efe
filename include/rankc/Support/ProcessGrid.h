//===- ProcessGrid.h - a rank's neighbour on a process grid -----*- C++ -*-===//
//
// The one definition of dag-format.md's grid peers (v3), shared by the
// frontend, the comm dialect and the cross-rank analysis: ranks form a
// row-major grid (rank r at np.unravel_index(r, grid)); the peer is the rank
// at the coordinates moved by `shift`, wrapping on periodic axes and none
// (MPI_PROC_NULL) past the edge of the others. The runtime resolves the same
// rule on its side of the ABI (runtime/mpi/Messages.cpp).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_SUPPORT_PROCESSGRID_H
#define RANKC_SUPPORT_PROCESSGRID_H

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>

namespace rankc {

/// The peer of `rank`, or -1 when there is none. `periodic(i)` says whether
/// axis i wraps.
template <typename Periodic>
int64_t gridPeer(llvm::ArrayRef<int64_t> grid, llvm::ArrayRef<int64_t> shift,
                 Periodic periodic, int64_t rank) {
  int64_t peer = 0, rest = rank, stride = 1;
  for (size_t i = grid.size(); i-- > 0;) {
    int64_t p = grid[i], c = rest % p + shift[i];
    rest /= p;
    if (c < 0 || c >= p) {
      if (!periodic(i))
        return -1;
      c = (c % p + p) % p;
    }
    peer += c * stride;
    stride *= p;
  }
  return peer;
}

} // namespace rankc

#endif // RANKC_SUPPORT_PROCESSGRID_H
