//===- ElementwiseVectors.cpp - elementwise kernels on 16-byte accesses ---===//
//
// (What and why: ElementwiseVectors.h.)
//
//===----------------------------------------------------------------------===//

#include "ElementwiseVectors.h"

#include "mlir/Dialect/Linalg/Transforms/Transforms.h"

using namespace mlir;

/// A buffer whose every `width`-aligned run of its innermost dimension is
/// contiguous and `width`-aligned: an identity layout, or a view with unit
/// innermost stride whose static offset and other strides are multiples of
/// `width` (a gradient inside a DDP bucket, a parameter inside the
/// optimizer's flat state). Allocations start 256-byte aligned.
static bool alignedRows(MemRefType type, int64_t width) {
  if (type.getLayout().isIdentity())
    return true;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || strides.empty() ||
      strides.back() != 1 || ShapedType::isDynamic(offset) || offset % width)
    return false;
  return llvm::all_of(ArrayRef<int64_t>(strides).drop_back(), [&](int64_t s) {
    return !ShapedType::isDynamic(s) && s % width == 0;
  });
}

/// Elementwise ops whose innermost loop is a static multiple of `width`:
/// each thread will handle `width` contiguous elements with vector loads
/// and stores (16 bytes for f32), which keeps enough bytes in flight to
/// stream from HBM. Scalar accesses (one 4-byte load per thread) cannot.
/// Ops of fewer than `minElements` elements stay scalar: a kernel that
/// small is bound by its launch, and its vector code is `width` times the
/// PTX (a program of thousands of them spent most of its build in ptxas).
bool rankc::vectorizable(linalg::GenericOp op, int64_t width, int64_t minElements) {
  if (width <= 1 || op.getNumReductionLoops() != 0 || op.getNumLoops() == 0 ||
      op.hasIndexSemantics())
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic) || ranges.back() % width)
    return false;
  int64_t elements = 1;
  for (int64_t r : ranges)
    elements *= r;
  if (elements < minElements)
    return false;
  for (OpOperand &operand : op->getOpOperands()) {
    Type t = getElementTypeOrSelf(operand.get().getType());
    if (!t.isIntOrFloat() || t.getIntOrFloatBitWidth() < 8)
      return false;
    // The innermost loop must walk each operand's innermost, contiguous
    // dimension. (An operand broadcast along it, a column or a scalar, would
    // need a vector broadcast that the NVVM lowering does not take: such
    // ops stay scalar. Splat constants are no operands: fusion folded them.)
    auto type = dyn_cast<MemRefType>(operand.get().getType());
    if (!type || !alignedRows(type, width))
      return false;
    AffineMap map = op.getMatchingIndexingMap(&operand);
    unsigned last = op.getNumLoops() - 1;
    if (map.getNumResults() == 0 ||
        map.getResults().back() != getAffineDimExpr(last, op.getContext()))
      return false;
  }
  return true;
}

/// (The tile's op replaces `op` inside the scf.parallel loops over the
/// tiles; ElementwiseVectors.h.)
FailureOr<linalg::LinalgOp>
rankc::tileAsParallelLoops(RewriterBase &rewriter, linalg::LinalgOp op,
                           ArrayRef<int64_t> sizes) {
  linalg::LinalgTilingOptions tiling;
  tiling.setTileSizes(sizes).setLoopType(
      linalg::LinalgTilingLoopType::ParallelLoops);
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::TiledLinalgOp> tiled =
      linalg::tileLinalgOp(rewriter, op, tiling);
  if (failed(tiled))
    return failure();
  rewriter.eraseOp(op);
  return tiled->op;
}

/// Tiles `op` by `width` on its innermost loop (an scf.parallel over the
/// tiles) and vectorizes the tile: transfer reads and writes of
/// vector<...x width>, then plain vector loads and stores.
LogicalResult rankc::vectorizeElementwise(RewriterBase &rewriter,
                                          linalg::GenericOp op,
                                          int64_t width) {
  SmallVector<int64_t> sizes(op.getNumLoops(), 1);
  sizes.back() = width;
  FailureOr<linalg::LinalgOp> tile =
      rankc::tileAsParallelLoops(rewriter, op, sizes);
  if (failed(tile))
    return failure();
  rewriter.setInsertionPoint(*tile);
  if (failed(linalg::vectorize(rewriter, *tile))) {
    // Not vectorizable after all: the tile as scalar loops.
    if (failed(linalg::linalgOpToLoops(rewriter, *tile)))
      return failure();
  }
  rewriter.eraseOp(*tile);
  return success();
}

