//===- GpuSplitReductions.cpp - full reductions in two parallel stages ----===//
//
// A reduction to a scalar (a loss, a total) has no parallel loop, so
// rankc-linalg-to-gpu-loops would run it as one GPU thread: a 1M-element
// sum takes ~100 ms that way. Here, on tensors, each such linalg op of at
// least `min-size` elements has its loops collapsed into one (when the
// operands allow it) and is split by upstream linalg::splitReduction into a
// parallel stage (`ratio` partial results, each a contiguous chunk) and a
// small final reduction of those partials. Sums then run in a different
// order than on the CPU: equal within rounding, exact for integers,
// max and min.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUSPLITREDUCTIONS
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// The largest power of two up to `limit` that divides `n` (1 if none).
int64_t ratioFor(int64_t n, int64_t limit) {
  int64_t r = 1;
  while (r * 2 <= limit && n % (r * 2) == 0)
    r *= 2;
  return r;
}

struct GpuSplitReductionsPass
    : public rankc::impl::RankcGpuSplitReductionsBase<GpuSplitReductionsPass> {
  using RankcGpuSplitReductionsBase::RankcGpuSplitReductionsBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> full;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op.hasPureTensorSemantics() && op.getNumParallelLoops() == 0 &&
          op.getNumReductionLoops() > 0 && op.getNumDpsInits() == 1)
        full.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : full) {
      SmallVector<int64_t> ranges = op.getStaticLoopRanges();
      if (llvm::any_of(ranges, ShapedType::isDynamic))
        continue;
      int64_t n = 1;
      for (int64_t r : ranges)
        n *= r;
      if (n < minSize)
        continue;
      linalg::LinalgOp one = op;
      if (ranges.size() > 1) {
        ReassociationIndices all;
        for (unsigned d = 0; d < ranges.size(); ++d)
          all.push_back(d);
        if (!linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), {all}))
          continue;
        rewriter.setInsertionPoint(op);
        FailureOr<linalg::CollapseResult> collapsed =
            linalg::collapseOpIterationDims(op, {all}, rewriter);
        if (failed(collapsed))
          continue;
        rewriter.replaceOp(op, collapsed->results);
        one = collapsed->collapsedOp;
      }
      int64_t split = ratioFor(n, ratio);
      if (split < 2)
        continue;
      rewriter.setInsertionPoint(one);
      // Failure (a combiner splitReduction does not know) leaves it as is.
      (void)linalg::splitReduction(rewriter, one, [&](linalg::LinalgOp) {
        return linalg::SplitReductionOptions{split, 0, /*innerParallel=*/false};
      });
    }
  }
};

} // namespace
