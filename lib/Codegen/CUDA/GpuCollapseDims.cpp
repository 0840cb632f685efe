//===- GpuCollapseDims.cpp - fewer, longer loops for the GPU mapping ------===//
//
// rankc-linalg-to-gpu-loops maps at most three loops of an op onto the
// grid and the block (z, y, x); a fourth parallel loop runs serially in
// every thread. The exporter's shapes often have four or more (batch,
// sequence, a keepdim 1, columns: layer norm's statistics over [8, 256, 1,
// 1024] got 8192 threads and a serial loop of 8). Here every linalg.generic
// has each maximal run of adjacent loops of one kind (parallel or
// reduction) that every operand reads contiguously collapsed into one loop
// (upstream's populateCollapseDimensions, reshaping the operands as views).
// Unit loops go with their neighbours. The innermost contiguous dimension
// stays innermost, so vectorization and coalescing are unchanged. An
// operand that is a slice of a bigger tensor joins loops only where the
// slice is a view of it once collapsed.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUCOLLAPSEDIMS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Whether loop `d` may join the loop before it where operand `v` (read by
/// `map`) is a slice of a bigger tensor (q, k and v cut from one
/// projection; a gradient written into its part of a concat): only across
/// a dimension the slice takes whole, of unit strides. Otherwise the
/// collapsed operand is no view of the bigger buffer, and bufferization
/// copies it to a buffer of its own and back (three kernels for one: the
/// GPT's backward wrote q's, k's and v's gradients so).
bool joinsInSlice(Value v, AffineMap map, unsigned d) {
  std::optional<unsigned> pos =
      map.getResultPosition(getAffineDimExpr(d, map.getContext()));
  if (!pos)
    return true; // (d does not move in `v`)
  // The slice's dims under each of `v`'s, through the collapses made so
  // far (this pass collapses a few loops at a time).
  auto type = cast<RankedTensorType>(v.getType());
  SmallVector<ReassociationIndices> under;
  for (int64_t i = 0; i < type.getRank(); ++i)
    under.push_back({i});
  while (auto collapse = v.getDefiningOp<tensor::CollapseShapeOp>()) {
    SmallVector<ReassociationIndices> groups =
        collapse.getReassociationIndices();
    for (ReassociationIndices &dims : under) {
      ReassociationIndices wider;
      for (int64_t i : dims)
        llvm::append_range(wider, groups[i]);
      dims = wider;
    }
    v = collapse.getSrc();
  }
  auto slice = v.getDefiningOp<tensor::ExtractSliceOp>();
  if (!slice)
    return true;
  RankedTensorType source = slice.getSourceType();
  if (source.getRank() != slice.getResultType().getRank() ||
      !slice.hasUnitStride())
    return false;
  ArrayRef<int64_t> sizes = slice.getStaticSizes();
  return llvm::all_of(under[*pos], [&](int64_t i) {
    return !ShapedType::isDynamic(sizes[i]) &&
           sizes[i] == source.getDimSize(i);
  });
}

SmallVector<ReassociationIndices> collapsible(linalg::LinalgOp op) {
  SmallVector<ReassociationIndices> groups;
  auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
  if (!generic || !generic.hasPureTensorSemantics())
    return groups;
  // An op that reads its loop indices gets them back by division and
  // remainder once its loops are joined (upstream does that): worth it
  // where it has more loops than the grid has dimensions and all are
  // parallel (a convolution's im2col copy with its pad computed in:
  // [G, C, K1, K2, N, E1, E2], four of which ran serially in each thread,
  // 300 us for 4.7 MB). Others (a pad of four dims, the cross-entropy's
  // pick of the target's logit) keep their loops.
  if (generic.hasIndexSemantics() &&
      (generic.getNumLoops() <= 3 || generic.getNumReductionLoops() != 0))
    return groups;
  SmallVector<utils::IteratorType> kinds = generic.getIteratorTypesArray();
  SmallVector<AffineMap> maps = generic.getIndexingMapsArray();
  // Only maps of plain dimensions: a broadcast written as a constant 0
  // result (x[d0, d1, 0]) is collapsed wrongly upstream (a reshape of
  // the wrong rank), so such ops keep their loops.
  if (!llvm::all_of(maps, [](AffineMap m) { return m.isProjectedPermutation(); }))
    return groups;
  ReassociationIndices run;
  auto close = [&] {
    if (run.size() > 1)
      groups.push_back(run);
    run.clear();
  };
  for (int64_t d = 0, e = kinds.size(); d < e; ++d) {
    if (!run.empty() && kinds[d] == kinds[run.back()]) {
      ReassociationIndices longer(run);
      longer.push_back(d);
      if (linalg::areDimSequencesPreserved(maps, {longer}) &&
          llvm::all_of(generic->getOpOperands(), [&](OpOperand &o) {
            return joinsInSlice(o.get(), generic.getMatchingIndexingMap(&o),
                                unsigned(d));
          })) {
        run = longer;
        continue;
      }
    }
    close();
    run.push_back(d);
  }
  close();
  return groups;
}

struct GpuCollapseDimsPass
    : public rankc::impl::RankcGpuCollapseDimsBase<GpuCollapseDimsPass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    linalg::populateCollapseDimensions(patterns, collapsible);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(patterns, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(patterns, ctx);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
