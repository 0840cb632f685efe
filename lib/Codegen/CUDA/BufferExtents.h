//===- BufferExtents.h - where a buffer's bytes are -------------*- C++ -*-===//
//
// After rankc-plan-buffers a function's temporaries are views of one block
// (memref.view at constant byte shifts): whether two buffers share bytes,
// and whether two accesses are the same element, is then arithmetic on
// their place in the block. Row chains (RowChains.h) ask both before they
// reorder ops.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_CODEGEN_CUDA_BUFFEREXTENTS_H
#define RANKC_LIB_CODEGEN_CUDA_BUFFEREXTENTS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Value.h"

#include <cstdint>
#include <limits>
#include <optional>

namespace rankc {

/// Where a buffer's bytes are: [begin, end) of `root` (all of it when not
/// known); and where its layout's offsets count from, the byte `base` of
/// `root` (a memref.view's shift, 0 for the root itself; none if the
/// shift is not constant).
struct Extent {
  mlir::Value root;
  int64_t begin = 0;
  int64_t end = std::numeric_limits<int64_t>::max();
  std::optional<int64_t> base;

  /// Whether the offsets of `other`'s layout count from the same byte.
  bool sameBase(const Extent &other) const {
    return root == other.root && base && other.base && *base == *other.base;
  }
};

/// `v`'s extent, through views, reshapes and subviews (a subview's is its
/// source's: a superset) to the nearest memref.view or the root.
Extent extentOf(mlir::Value v);

/// Whether `a` and `b` may share bytes: ranges of one root that meet, or
/// two roots neither of which is memory of its own (an allocation, the
/// step's scratch block, a part's block: two arguments of a function may
/// be one buffer for all it knows).
bool mayOverlap(const Extent &a, const Extent &b);

/// The element `indices` of `type` as an offset (in elements) from its
/// layout's base; none for a dynamic layout.
std::optional<int64_t> elementOffset(mlir::MemRefType type,
                                     llvm::ArrayRef<int64_t> indices);

} // namespace rankc

#endif // RANKC_LIB_CODEGEN_CUDA_BUFFEREXTENTS_H
