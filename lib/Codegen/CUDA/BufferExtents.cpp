//===- BufferExtents.cpp - where a buffer's bytes are ---------------------===//
//
// (What and why: BufferExtents.h.)
//
//===----------------------------------------------------------------------===//

#include "BufferExtents.h"

#include "rankc/Codegen/CUDA/Passes.h"
#include "rankc/Codegen/Common/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
using rankc::Extent;

namespace {

/// Memory no other buffer shares: an allocation, the step's scratch block,
/// a part's block (an argument its callers allocate for the call), or the
/// runtime's index record.
bool ownMemory(Value root) {
  if (auto arg = dyn_cast<BlockArgument>(root)) {
    auto fn = dyn_cast<func::FuncOp>(arg.getOwner()->getParentOp());
    return fn && arg.getOwner()->isEntryBlock() &&
           fn.getArgAttr(arg.getArgNumber(), rankc::kScratchBytes);
  }
  Operation *def = root.getDefiningOp();
  if (isa_and_nonnull<memref::AllocOp, memref::AllocaOp, gpu::AllocOp>(def))
    return true;
  auto call = dyn_cast_or_null<func::CallOp>(def);
  return call && (call.getCallee() == rankc::kScratchFunction ||
                  call.getCallee() == rankc::kIndexRecordFunction);
}

} // namespace

Extent rankc::extentOf(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<memref::ViewOp>(def)) {
      std::optional<int64_t> shift = getConstantIntValue(view.getByteShift());
      Extent e{view.getSource(), 0, std::numeric_limits<int64_t>::max(), shift};
      MemRefType type = view.getType();
      Type element = type.getElementType();
      if (shift && type.hasStaticShape() && element.isIntOrFloat()) {
        e.begin = *shift;
        e.end = *shift + type.getNumElements() *
                             int64_t((element.getIntOrFloatBitWidth() + 7) / 8);
      }
      return e;
    }
    auto viewLike = dyn_cast<ViewLikeOpInterface>(def);
    if (!viewLike)
      break;
    v = viewLike.getViewSource();
  }
  return Extent{v, 0, std::numeric_limits<int64_t>::max(), 0};
}

bool rankc::mayOverlap(const Extent &a, const Extent &b) {
  if (a.root == b.root)
    return a.begin < b.end && b.begin < a.end;
  return !ownMemory(a.root) && !ownMemory(b.root);
}

std::optional<int64_t> rankc::elementOffset(MemRefType type,
                                            ArrayRef<int64_t> indices) {
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      ShapedType::isDynamic(offset))
    return std::nullopt;
  for (auto [stride, i] : llvm::zip(strides, indices)) {
    if (ShapedType::isDynamic(stride))
      return std::nullopt;
    offset += stride * i;
  }
  return offset;
}
