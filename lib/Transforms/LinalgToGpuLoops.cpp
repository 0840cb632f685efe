//===- LinalgToGpuLoops.cpp - linalg to tiled, GPU-mapped parallel loops --===//
//
// Upstream pieces do the work (linalg's lowering to scf.parallel, SCF's
// parallel-loop tiling, GPU's loop-mapping attributes); this pass chooses
// what upstream's `gpu-map-parallel-loops` cannot: tile sizes from the static
// shape, the contiguous dimension on thread x, and a home on the GPU for ops
// that have no parallel loop at all.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCLINALGTOGPULOOPS
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Parallel loops first: the loops that become blocks and threads must be
/// the outermost ones. Reduction loops keep their relative order, so every
/// element is reduced in the same order as before.
void parallelLoopsFirst(RewriterBase &rewriter, linalg::GenericOp op) {
  SmallVector<unsigned> parallel, reduction;
  for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray()))
    (linalg::isParallelIterator(it) ? parallel : reduction).push_back(i);
  SmallVector<unsigned> perm(parallel);
  perm.append(reduction);
  if (llvm::is_sorted(perm))
    return;
  rewriter.setInsertionPoint(op);
  (void)linalg::interchangeGenericOp(rewriter, op, perm);
}

/// Tile sizes for a loop over `trips`: from the innermost dimension out,
/// each takes as many of the block's threads as it has iterations (a power
/// of two), up to three dimensions; the rest stay 1.
SmallVector<int64_t> tileSizes(ArrayRef<int64_t> trips, int64_t threads) {
  SmallVector<int64_t> sizes(trips.size(), 1);
  int64_t left = threads;
  for (int i = int(trips.size()) - 1, used = 0; i >= 0 && used < 3; --i) {
    int64_t want = trips[i] > 0 ? int64_t(llvm::PowerOf2Ceil(trips[i])) : left;
    sizes[i] = std::max<int64_t>(1, std::min(want, left));
    left /= sizes[i];
    ++used;
    if (left <= 1)
      break;
  }
  return sizes;
}

/// Maps a loop's dimensions, innermost first, to x, y, z of `first`
/// (BlockX or ThreadX); dimensions beyond three run sequentially.
void mapLoop(scf::ParallelOp loop, gpu::Processor first) {
  MLIRContext *ctx = loop.getContext();
  unsigned n = loop.getNumLoops();
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping;
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  for (unsigned d = 0; d < n; ++d) {
    unsigned fromInner = n - 1 - d;
    auto proc = fromInner < 3
                    ? gpu::Processor(uint64_t(first) + fromInner)
                    : gpu::Processor::Sequential;
    mapping.push_back(gpu::ParallelLoopDimMappingAttr::get(ctx, proc, id, id));
  }
  (void)gpu::setMappingAttr(loop, mapping);
}

/// The static trip counts of a normalized loop (-1 where unknown).
SmallVector<int64_t> tripCounts(scf::ParallelOp loop) {
  SmallVector<int64_t> trips;
  for (auto [lb, ub, step] : llvm::zip(loop.getLowerBound(),
                                       loop.getUpperBound(), loop.getStep())) {
    auto l = getConstantIntValue(lb), u = getConstantIntValue(ub),
         s = getConstantIntValue(step);
    trips.push_back(l && u && s && *s > 0 ? llvm::divideCeil(*u - *l, *s)
                                          : -1);
  }
  return trips;
}

struct LinalgToGpuLoopsPass
    : public rankc::impl::RankcLinalgToGpuLoopsBase<LinalgToGpuLoopsPass> {
  using RankcLinalgToGpuLoopsBase::RankcLinalgToGpuLoopsBase;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    IRRewriter rewriter(&getContext());
    SmallVector<linalg::LinalgOp> ops;
    fn.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op->emitError("rankc-linalg-to-gpu-loops expects bufferized linalg ops");
        return signalPassFailure();
      }
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
        parallelLoopsFirst(rewriter, generic);
        // interchangeGenericOp updates the op in place.
      }
      Location loc = op.getLoc();
      if (op.getNumParallelLoops() == 0) {
        // One thread: a loop of one iteration around the sequential loops.
        rewriter.setInsertionPoint(op);
        Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
        Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
        auto single = scf::ParallelOp::create(rewriter, loc, ValueRange{zero},
                                              ValueRange{one}, ValueRange{one});
        rewriter.moveOpBefore(op, single.getBody()->getTerminator());
        rewriter.setInsertionPoint(op);
        if (failed(linalg::linalgOpToLoops(rewriter, op)))
          return signalPassFailure();
        rewriter.eraseOp(op);
        continue;
      }
      rewriter.setInsertionPoint(op);
      if (failed(linalg::linalgOpToParallelLoops(rewriter, op)))
        return signalPassFailure();
      rewriter.eraseOp(op);
    }

    // Tile and map every outermost parallel loop: tiles to blocks, the
    // points of a tile to threads.
    SmallVector<scf::ParallelOp> outer;
    fn.walk([&](scf::ParallelOp loop) {
      if (!loop->getParentOfType<scf::ParallelOp>())
        outer.push_back(loop);
    });
    for (scf::ParallelOp loop : outer) {
      SmallVector<int64_t> trips = tripCounts(loop);
      SmallVector<int64_t> sizes = tileSizes(trips, threads);
      if (llvm::all_of(sizes, [](int64_t s) { return s == 1; })) {
        // A single iteration: one block of one thread.
        mapLoop(loop, gpu::Processor::BlockX);
        continue;
      }
      auto [blocks, points] =
          scf::tileParallelLoop(loop, sizes, /*noMinMaxBounds=*/true);
      mapLoop(blocks, gpu::Processor::BlockX);
      mapLoop(points, gpu::Processor::ThreadX);
    }
  }
};

} // namespace
