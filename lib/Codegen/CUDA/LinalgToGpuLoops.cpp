//===- LinalgToGpuLoops.cpp - linalg to tiled, GPU-mapped parallel loops --===//
//
// Upstream pieces do the work (linalg's lowering to scf.parallel, SCF's
// parallel-loop tiling, GPU's loop-mapping attributes); this pass chooses
// what upstream's `gpu-map-parallel-loops` cannot: tile sizes from the static
// shape, the contiguous dimension on thread x, and a home on the GPU for ops
// that have no parallel loop at all.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

#include "ElementwiseVectors.h"
#include "FillFolding.h"
#include "RowChains.h"
#include "WarpReductions.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Dialect/Vector/Transforms/LoweringPatterns.h"
#include "mlir/Dialect/Vector/Transforms/VectorRewritePatterns.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/Support/MathExtras.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCLINALGTOGPULOOPS
#include "rankc/Codegen/CUDA/Passes.h.inc"
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

/// A contraction (parallel and reduction loops, static sizes) whose two
/// innermost parallel loops are multiples of `block` and whose inputs are
/// reused along both.
bool registerBlockable(linalg::LinalgOp op, int64_t block) {
  if (block <= 1 || op.getNumReductionLoops() == 0 ||
      op.getNumParallelLoops() < 2 || op.hasIndexSemantics())
    return false;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return false;
  SmallVector<unsigned> parallel;
  for (auto [i, it] : llvm::enumerate(op.getIteratorTypesArray()))
    if (linalg::isParallelIterator(it))
      parallel.push_back(i);
  // Parallel loops first (parallelLoopsFirst ran), so the last two parallel
  // loops are dimensions n-2 and n-1 of the parallel prefix.
  unsigned np = parallel.size();
  if (parallel.back() != np - 1)
    return false;
  // Blocking pays only through reuse: some input must not depend on each
  // of the two blocked loops (as a matmul's A does not on n, and B not on
  // m), so that one load serves a row or column of the tile. A reduction
  // that reads a distinct element per output (a column sum's partial
  // stage, a batch of dot products) would only lose 16x its threads.
  auto reusedAlong = [&](unsigned dim) {
    return llvm::any_of(op.getDpsInputOperands(), [&](OpOperand *in) {
      return !op.getMatchingIndexingMap(in).isFunctionOfDim(dim);
    });
  };
  if (!reusedAlong(np - 1) || !reusedAlong(np - 2))
    return false;
  // ... and no input may read a distinct element per output: its loads are
  // as many with blocking as without, and the reuse of the others (the
  // targets beside cross-entropy's [rows, vocab] logits, an iota) saves
  // little against 16x fewer threads and loads of a warp 4 elements apart
  // (the pick of the target logits: 0.73 ms of a 9.2 ms GPT step).
  bool distinctPerOutput = llvm::any_of(
      op.getDpsInputOperands(), [&](OpOperand *in) {
        AffineMap map = op.getMatchingIndexingMap(in);
        return map.isFunctionOfDim(np - 1) && map.isFunctionOfDim(np - 2);
      });
  if (distinctPerOutput)
    return false;
  return ranges[np - 1] % block == 0 && ranges[np - 2] % block == 0;
}

/// Register blocking of a contraction: each thread computes a block x block
/// tile of the output. The op is tiled by (block, block) on its two
/// innermost parallel loops (linalg tiling: an scf.parallel over tiles),
/// the tile is generalized and interchanged so its reduction loops are
/// outermost, lowered to loops, and the tile's own loops fully unrolled:
/// per reduction step, `block` loads of each input feed block^2
/// multiply-adds whose accumulators promoteAccumulators() then keeps in
/// registers.
LogicalResult registerBlock(RewriterBase &rewriter, linalg::LinalgOp op,
                            int64_t block) {
  unsigned np = op.getNumParallelLoops(), n = op.getNumLoops();
  SmallVector<int64_t> sizes(n, 0);
  for (unsigned i = 0; i < np; ++i)
    sizes[i] = 1;
  sizes[np - 1] = sizes[np - 2] = block;
  FailureOr<linalg::LinalgOp> tiled =
      rankc::tileAsParallelLoops(rewriter, op, sizes);
  if (failed(tiled))
    return failure();
  linalg::LinalgOp tile = *tiled;
  linalg::GenericOp generic = dyn_cast<linalg::GenericOp>(tile.getOperation());
  if (!generic) {
    rewriter.setInsertionPoint(tile);
    FailureOr<linalg::GenericOp> g = linalg::generalizeNamedOp(rewriter, tile);
    if (failed(g))
      return failure();
    generic = *g;
  }
  // Reductions outermost, then the tile's parallel loops.
  SmallVector<unsigned> perm;
  for (unsigned i = np; i < n; ++i)
    perm.push_back(i);
  for (unsigned i = 0; i < np; ++i)
    perm.push_back(i);
  rewriter.setInsertionPoint(generic);
  FailureOr<linalg::GenericOp> swapped =
      linalg::interchangeGenericOp(rewriter, generic, perm);
  if (failed(swapped))
    return failure();
  rewriter.setInsertionPoint(*swapped);
  FailureOr<linalg::LinalgLoops> loops =
      linalg::linalgOpToLoops(rewriter, *swapped);
  if (failed(loops))
    return failure();
  rewriter.eraseOp(*swapped);
  // The tile's loops (innermost first) unrolled: constant trips of 1 or
  // `block`.
  for (Operation *loop : llvm::reverse(
           ArrayRef<Operation *>(*loops).drop_front(n - np)))
    if (failed(loopUnrollFull(cast<scf::ForOp>(loop))))
      return failure();
  return success();
}

/// The dimensions of a loop over `trips` that get the GPU's x, y and z
/// (innermost first): the three innermost that have more than one
/// iteration. A unit dimension (a 1x1 convolution's window) would waste
/// one, and push a real dimension onto z, which takes at most 64 threads.
SmallVector<unsigned> mappedDims(ArrayRef<int64_t> trips) {
  SmallVector<unsigned> dims;
  for (int i = int(trips.size()) - 1; i >= 0 && dims.size() < 3; --i)
    if (trips[i] != 1)
      dims.push_back(i);
  return dims;
}

/// Tile sizes for a loop over `trips`: from the innermost mapped dimension
/// out, each takes as many of the block's threads as it has iterations (a
/// power of two); the rest stay 1. With two dimensions or more, the
/// innermost takes at most a warp (32): a warp still reads 128 contiguous
/// bytes, and a square-ish tile lets the threads of a block share what they
/// read in the L1 cache (a matmul's rows of A and columns of B). z takes at
/// most 64 threads (the GPU's limit).
SmallVector<int64_t> tileSizes(ArrayRef<int64_t> trips, int64_t threads) {
  SmallVector<int64_t> sizes(trips.size(), 1);
  SmallVector<unsigned> dims = mappedDims(trips);
  int64_t left = threads;
  for (auto [used, i] : llvm::enumerate(dims)) {
    int64_t want = trips[i] > 0 ? int64_t(llvm::PowerOf2Ceil(trips[i])) : left;
    if (used == 0 && dims.size() > 1)
      want = std::min<int64_t>(want, 32);
    if (used == 2)
      want = std::min<int64_t>(want, 64);
    sizes[i] = std::max<int64_t>(1, std::min(want, left));
    left /= sizes[i];
    if (left <= 1)
      break;
  }
  return sizes;
}

/// Maps the dimensions `dims` of a loop (innermost first, mappedDims) to x,
/// y, z of `first` (BlockX or ThreadX); the others run sequentially.
void mapLoop(scf::ParallelOp loop, gpu::Processor first,
             ArrayRef<unsigned> dims) {
  MLIRContext *ctx = loop.getContext();
  unsigned n = loop.getNumLoops();
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping;
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  for (unsigned d = 0; d < n; ++d) {
    auto at = llvm::find(dims, d);
    auto proc = at != dims.end()
                    ? gpu::Processor(uint64_t(first) + (at - dims.begin()))
                    : gpu::Processor::Sequential;
    mapping.push_back(gpu::ParallelLoopDimMappingAttr::get(ctx, proc, id, id));
  }
  (void)gpu::setMappingAttr(loop, mapping);
}

/// A reduction loop loads and stores the element it reduces into at the
/// same loop-invariant place on every iteration. Keeping it in a register
/// (an iter_arg) instead, stored once after the loop, saves a global load
/// and store per iteration; LLVM cannot do it itself, as it cannot prove
/// that the kernel's buffers do not alias. linalg's semantics can: an
/// output element is read and written only by its own update, and
/// bufferization never makes an input share the output's buffer.
void promoteAccumulators(RewriterBase &rewriter, scf::ForOp loop,
                         bool first = true) {
  if (first && loop.getNumRegionIterArgs() != 0)
    return;
  for (Operation &op : *loop.getBody()) {
    auto store = dyn_cast<memref::StoreOp>(op);
    if (!store || !llvm::all_of(store.getIndices(), [&](Value v) {
          return loop.isDefinedOutsideOfLoop(v);
        }))
      continue;
    Value memref = store.getMemRef();
    memref::LoadOp load;
    bool other = false;
    // Other accesses to the buffer in the loop are fine when they are
    // provably elsewhere (a register-blocked tile: constant, distinct
    // indices); anything else might alias the accumulator.
    auto disjoint = [&](ValueRange indices) {
      for (auto [a, b] : llvm::zip(indices, store.getIndices())) {
        auto ca = getConstantIntValue(a), cb = getConstantIntValue(b);
        if (ca && cb && *ca != *cb)
          return true;
      }
      return false;
    };
    for (OpOperand &use : memref.getUses()) {
      Operation *user = use.getOwner();
      if (user == store || !loop->isAncestor(user))
        continue;
      auto l = dyn_cast<memref::LoadOp>(user);
      if (!load && l && l->getBlock() == loop.getBody() &&
          l->isBeforeInBlock(store) && l.getIndices() == store.getIndices())
        load = l;
      else if (l && disjoint(l.getIndices()))
        continue;
      else if (auto s = dyn_cast<memref::StoreOp>(user);
               s && s.getMemRef() == memref && disjoint(s.getIndices()))
        continue;
      else
        other = true;
    }
    if (!load || other)
      continue;
    rewriter.setInsertionPoint(loop);
    Value init = memref::LoadOp::create(rewriter, loop.getLoc(), memref,
                                        store.getIndices());
    Value stored = store.getValueToStore();
    auto grown = cast<scf::ForOp>(*loop.replaceWithAdditionalYields(
        rewriter, ValueRange{init}, /*replaceInitOperandUsesInLoop=*/false,
        [&](OpBuilder &, Location, ArrayRef<BlockArgument>) {
          return SmallVector<Value>{stored};
        }));
    rewriter.replaceOp(load, grown.getRegionIterArgs().back());
    rewriter.setInsertionPointAfter(grown);
    memref::StoreOp::create(rewriter, grown.getLoc(), grown.getResults().back(),
                            memref, store.getIndices());
    rewriter.eraseOp(store);
    // The loop was replaced: look for the next accumulator in the new one.
    return promoteAccumulators(rewriter, grown, /*first=*/false);
  }
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

/// The same loop from 0 by 1: scf::tileParallelLoop's in-bound guard
/// (noMinMaxBounds) computes `inner_iv * step + outer_iv` although the inner
/// induction variable already advances by the step, so with a step other
/// than 1 (the vectorized loops step by the vector width) it skips all but
/// the first iterations of a tile. Bounds must be constant (tripCounts).
scf::ParallelOp normalizeSteps(RewriterBase &rewriter, scf::ParallelOp loop,
                               ArrayRef<int64_t> trips) {
  bool unit = llvm::all_of(
      llvm::zip(loop.getLowerBound(), loop.getStep()), [](auto pair) {
        return isConstantIntValue(std::get<0>(pair), 0) &&
               isConstantIntValue(std::get<1>(pair), 1);
      });
  if (unit || llvm::is_contained(trips, -1) || loop.getNumResults())
    return loop;
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  SmallVector<Value> zeros, ones, ubs;
  for (int64_t t : trips) {
    zeros.push_back(arith::ConstantIndexOp::create(rewriter, loc, 0));
    ones.push_back(arith::ConstantIndexOp::create(rewriter, loc, 1));
    ubs.push_back(arith::ConstantIndexOp::create(rewriter, loc, t));
  }
  auto unitLoop = scf::ParallelOp::create(rewriter, loc, zeros, ubs, ones);
  Block *body = unitLoop.getBody();
  rewriter.eraseOp(body->getTerminator());
  rewriter.setInsertionPointToStart(body);
  SmallVector<Value> ivs;
  for (auto [iv, lb, step] : llvm::zip(unitLoop.getInductionVars(),
                                       loop.getLowerBound(), loop.getStep())) {
    Value scaled = arith::MulIOp::create(rewriter, loc, iv, step);
    ivs.push_back(arith::AddIOp::create(rewriter, loc, scaled, lb));
  }
  rewriter.mergeBlocks(loop.getBody(), body, ivs);
  for (NamedAttribute a : loop->getDiscardableAttrs())
    unitLoop->setAttr(a.getName(), a.getValue());
  rewriter.eraseOp(loop);
  return unitLoop;
}

/// Maps the tiles loop `blocks` (around `points`) to the grid. A loop with
/// more than three dimensions of several iterations (a convolution's
/// [N, C, H, W] and window loops) has its outer ones joined with the one on
/// z into one dimension of blocks (upstream's collapseParallelLoops), while
/// it fits z's 65535: otherwise every thread would walk them in sequence
/// (resnet18's batch of 32 in each).
void mapBlocks(RewriterBase &rewriter, scf::ParallelOp blocks,
               scf::ParallelOp points, ArrayRef<int64_t> trips,
               ArrayRef<int64_t> sizes, ArrayRef<unsigned> dims) {
  auto tiles = [&](unsigned d) { return llvm::divideCeil(trips[d], sizes[d]); };
  std::vector<unsigned> outer;
  int64_t joined = 1;
  bool several = false;
  for (unsigned d = 0; d < trips.size(); ++d)
    if (!llvm::is_contained(dims, d)) {
      outer.push_back(d);
      several |= trips[d] > 1;
      joined *= trips[d];
    }
  if (!several || dims.size() != 3 || llvm::is_contained(trips, -1) ||
      joined * tiles(dims[2]) > 65535) {
    mapLoop(blocks, gpu::Processor::BlockX, dims);
    return;
  }
  outer.push_back(dims[2]);
  llvm::sort(outer);
  std::vector<std::vector<unsigned>> groups = {outer, {dims[1]}, {dims[0]}};
  collapseParallelLoops(rewriter, blocks, groups);
  mapLoop(points->getParentOfType<scf::ParallelOp>(), gpu::Processor::BlockX,
          {2, 1, 0});
}

struct LinalgToGpuLoopsPass
    : public rankc::impl::RankcLinalgToGpuLoopsBase<LinalgToGpuLoopsPass> {
  using RankcLinalgToGpuLoopsBase::RankcLinalgToGpuLoopsBase;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    IRRewriter rewriter(&getContext());
    // Row chains first: their ops (and the fills they fold) are gone before
    // the ops left are collected. (A chain's rows must be whole tiles of
    // thread x, as a warp's lanes: blocks of `row-chain-lanes` threads or
    // more.)
    if (rowChains && rowChainLanes >= 1 && threads >= rowChainLanes &&
        llvm::isPowerOf2_64(rowChainLanes))
      for (const rankc::RowChain &chain : rankc::findRowChains(fn))
        rankc::lowerRowChain(rewriter, chain, rowChainLanes);
    SmallVector<linalg::LinalgOp> ops;
    fn.walk([&](linalg::LinalgOp op) { ops.push_back(op); });
    // Fills that may fold into their reductions wait: lowered at the end
    // unless the fold happened (FillFolding.h).
    auto foldable = rankc::findFoldableFills(fn);
    llvm::SmallSetVector<Operation *, 16> waitingFills;
    for (auto &[reduction, folds] : foldable)
      for (const rankc::FoldableFill &fold : folds)
        waitingFills.insert(fold.fill);
    SmallVector<std::pair<scf::ParallelOp, rankc::FoldableFill>> toFold;
    auto lowered = [&](Operation *reduction, Operation *loop) {
      auto it = foldable.find(reduction);
      if (it != foldable.end())
        for (const rankc::FoldableFill &fold : it->second)
          toFold.push_back({cast<scf::ParallelOp>(loop), fold});
    };
    bool vectorized = false;
    for (linalg::LinalgOp op : ops) {
      if (!op.hasPureBufferSemantics()) {
        op->emitError("rankc-linalg-to-gpu-loops expects bufferized linalg ops");
        return signalPassFailure();
      }
      if (waitingFills.contains(op))
        continue;
      // (A warp's lanes must be one tile of thread x: blocks of 32 threads
      // or more.)
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation());
          generic && threads >= 32 && rankc::warpReducible(generic)) {
        // A fill folded in: the lead lane starts from its value.
        linalg::FillOp fill;
        auto it = foldable.find(op);
        if (it != foldable.end() && it->second.size() == 1 &&
            waitingFills.contains(it->second[0].fill))
          fill = it->second[0].fill;
        if (failed(rankc::lowerAsWarpReduction(
                rewriter, generic, fill ? fill.getInputs()[0] : Value())))
          return signalPassFailure();
        if (fill) {
          waitingFills.remove(fill);
          rewriter.eraseOp(fill);
        }
        continue;
      }
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation()))
        parallelLoopsFirst(rewriter, generic); // in place
      if (registerBlockable(op, registerBlockSize)) {
        if (failed(registerBlock(rewriter, op, registerBlockSize)))
          return signalPassFailure();
        continue;
      }
      if (auto generic = dyn_cast<linalg::GenericOp>(op.getOperation())) {
        if (rankc::vectorizable(generic, vectorWidth, minVectorElements)) {
          if (failed(rankc::vectorizeElementwise(rewriter, generic, vectorWidth)))
            return signalPassFailure();
          vectorized = true;
          continue;
        }
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
        lowered(op, single);
        rewriter.eraseOp(op);
        continue;
      }
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          linalg::linalgOpToParallelLoops(rewriter, op);
      if (failed(loops))
        return signalPassFailure();
      if (!loops->empty() && isa<scf::ParallelOp>(loops->front()))
        lowered(op, loops->front());
      rewriter.eraseOp(op);
    }

    // linalg's lowering indexes through identity affine.apply ops made inside
    // the loops: fold them, so that loop-invariant indices are seen as such.
    // Vector transfers become 1-D vector loads and stores (unit dimensions
    // dropped, views folded in), which the GPU lowering turns into
    // ld.global.v4 / st.global.v4.
    RewritePatternSet folds(&getContext());
    affine::AffineApplyOp::getCanonicalizationPatterns(folds, &getContext());
    if (vectorized) {
      vector::populateCastAwayVectorLeadingOneDimPatterns(folds);
      vector::populateVectorTransferDropUnitDimsPatterns(folds);
      vector::populateVectorTransferLoweringPatterns(folds,
                                                     /*maxTransferRank=*/1);
      memref::SubViewOp::getCanonicalizationPatterns(folds, &getContext());
      vector::TransferReadOp::getCanonicalizationPatterns(folds, &getContext());
      vector::TransferWriteOp::getCanonicalizationPatterns(folds,
                                                           &getContext());
    }
    if (failed(applyPatternsGreedily(fn, std::move(folds))))
      return signalPassFailure();
    // A vector access is `width` contiguous elements at an index that is a
    // multiple of `width`, in an identity-layout buffer (which starts where
    // its allocation does: cuMemAlloc aligns to 256 bytes) or a view whose
    // offset and strides are multiples of `width` (alignedRows): so it is
    // aligned to its own size, and the GPU can move it in one instruction.
    auto align = [](Operation *op, VectorType type) {
      int64_t bytes = type.getNumElements() *
                      type.getElementType().getIntOrFloatBitWidth() / 8;
      if (llvm::isPowerOf2_64(bytes))
        op->setAttr("alignment",
                    IntegerAttr::get(IntegerType::get(op->getContext(), 64),
                                     bytes));
    };
    fn.walk([&](vector::LoadOp op) { align(op, op.getVectorType()); });
    fn.walk([&](vector::StoreOp op) { align(op, op.getVectorType()); });

    // Innermost loops first: a nest of reduction loops promotes outwards.
    SmallVector<scf::ForOp> fors;
    fn.walk([&](scf::ForOp loop) { fors.push_back(loop); });
    for (scf::ForOp loop : fors)
      promoteAccumulators(rewriter, loop);

    // Each reduction's threads start from its fill's value where they load
    // their accumulators only before storing them; the fills left become
    // kernels of their own, where they were.
    for (auto &[loop, fold] : toFold)
      if (waitingFills.contains(fold.fill) &&
          succeeded(rankc::foldFillInto(rewriter, loop, fold))) {
        waitingFills.remove(fold.fill);
        rewriter.eraseOp(fold.fill);
      }
    for (Operation *fill : waitingFills) {
      rewriter.setInsertionPoint(fill);
      if (failed(linalg::linalgOpToParallelLoops(
              rewriter, cast<linalg::LinalgOp>(fill))))
        return signalPassFailure();
      rewriter.eraseOp(fill);
    }

    // A thread's reduction loop waits for each load before the next add:
    // with one load in flight per thread, a partial stage of 65536 threads
    // over 128 rows each streamed at 600 GB/s. Unrolled, the loads of
    // several iterations are issued together (the adds stay in order).
    // (Collected again: promotion replaced loops by ones with iter_args.)
    SmallVector<scf::ForOp> innermostFors;
    fn.walk([&](scf::ForOp loop) { innermostFors.push_back(loop); });
    if (unroll > 1)
      for (scf::ForOp loop : innermostFors) {
        bool innermost = true;
        loop.getBody()->walk([&](scf::ForOp) { innermost = false; });
        std::optional<APInt> trips = loop.getStaticTripCount();
        if (innermost && loop->getParentOfType<scf::ParallelOp>() && trips &&
            trips->getSExtValue() >= 2 * unroll &&
            trips->getSExtValue() % unroll == 0)
          (void)loopUnrollByFactor(loop, unroll);
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
      SmallVector<unsigned> dims = mappedDims(trips);
      if (llvm::all_of(sizes, [](int64_t s) { return s == 1; })) {
        // A single iteration: one block of one thread.
        mapLoop(loop, gpu::Processor::BlockX,
                dims.empty() ? SmallVector<unsigned>{loop.getNumLoops() - 1}
                             : dims);
        continue;
      }
      loop = normalizeSteps(rewriter, loop, trips);
      auto [blocks, points] =
          scf::tileParallelLoop(loop, sizes, /*noMinMaxBounds=*/true);
      mapLoop(points, gpu::Processor::ThreadX, dims);
      mapBlocks(rewriter, blocks, points, trips, sizes, dims);
    }
  }
};

} // namespace
