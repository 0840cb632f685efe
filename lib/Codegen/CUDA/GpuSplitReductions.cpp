//===- GpuSplitReductions.cpp - reductions in two parallel stages --------===//
//
// rankc-linalg-to-gpu-loops gives each point of a reduction's parallel
// loops one GPU thread, which reduces serially. A reduction to a scalar (a
// loss, a total) is then one thread (a 1M-element sum took ~100 ms), and a
// row or column reduction (layer norm's statistics over 2048 rows, a bias
// gradient's sum over 2048 rows of 1024 columns) a few thousand threads
// each walking a thousand elements: a small fraction of an H200. Here, on
// tensors, each such linalg op has its reduction loops collapsed into one
// (when the operands allow it) and is split by upstream
// linalg::splitReduction into a parallel stage of `ratio` partial results
// per output element and a small final reduction of those partials, with
// the ratio chosen so that both stages have enough threads and each thread
// at least a few elements. Where the reduced dimension is the contiguous one
// (rows), partial j takes elements j, j + ratio, ...: neighbouring threads
// read neighbouring elements. Sums then run in a different order than on
// the CPU: equal within rounding, exact for integers, max and min.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/GemmMatch.h"
#include "rankc/Codegen/CUDA/Passes.h"

#include "WarpReductions.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUSPLITREDUCTIONS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Elements each thread of a first stage reduces (at least), and the
/// shortest reduction worth a stage: a serial loop of fewer runs as is.
constexpr int64_t kChunk = 16;
constexpr int64_t kMinReduced = 64;

/// The largest power of two up to `limit` that divides `n` (1 if none).
int64_t ratioFor(int64_t n, int64_t limit) {
  int64_t r = 1;
  while (r * 2 <= limit && n % (r * 2) == 0)
    r *= 2;
  return r;
}

/// `op` with every input that a map reads at a constant 0 (a unit dim:
/// layer norm's [rows, 1] statistics broadcast over the columns) collapsed
/// to the dims that its map reads with loop indices, so that each map is a
/// projected permutation (which collapsing loops needs). Returns `op` when
/// no input has one, null when an output has one.
linalg::GenericOp dropUnitConstantDims(IRRewriter &rewriter,
                                       linalg::GenericOp op) {
  auto constant = [](AffineExpr e) { return isa<AffineConstantExpr>(e); };
  for (OpOperand &init : op.getDpsInitsMutable())
    if (llvm::any_of(op.getMatchingIndexingMap(&init).getResults(), constant))
      return nullptr;
  bool any = false;
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  rewriter.setInsertionPoint(op);
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    auto type = dyn_cast<RankedTensorType>(in->get().getType());
    if (!type || !llvm::any_of(map.getResults(), constant)) {
      inputs.push_back(in->get());
      maps.push_back(map);
      continue;
    }
    // Each unit dim joins the group of the loop-indexed dim before it (or
    // the first one after it).
    SmallVector<ReassociationIndices> groups;
    SmallVector<AffineExpr> kept;
    ReassociationIndices pending;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      if (constant(e)) {
        if (type.getDimSize(i) != 1 || cast<AffineConstantExpr>(e).getValue())
          return nullptr;
        if (groups.empty())
          pending.push_back(i);
        else
          groups.back().push_back(i);
        continue;
      }
      groups.push_back(pending);
      pending.clear();
      groups.back().push_back(i);
      kept.push_back(e);
    }
    SmallVector<int64_t> shape;
    for (const ReassociationIndices &g : groups) {
      int64_t size = 1;
      for (int64_t i : g)
        size *= type.getDimSize(i);
      shape.push_back(size);
    }
    auto collapsedType = RankedTensorType::get(shape, type.getElementType());
    inputs.push_back(tensor::CollapseShapeOp::create(
        rewriter, op.getLoc(), collapsedType, in->get(), groups));
    maps.push_back(AffineMap::get(map.getNumDims(), 0, kept, op.getContext()));
    any = true;
  }
  if (!any)
    return op;
  for (OpOperand &init : op.getDpsInitsMutable())
    maps.push_back(op.getMatchingIndexingMap(&init));
  auto rebuilt = linalg::GenericOp::create(
      rewriter, op.getLoc(), op.getResultTypes(), inputs, op.getDpsInits(),
      maps, op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), rebuilt.getRegion(),
                              rebuilt.getRegion().begin());
  rewriter.replaceOp(op, rebuilt.getResults());
  return rebuilt;
}

/// `op` with each loop index its body reads (linalg.index: the
/// cross-entropy's pick of each row's target logit) read from an input
/// instead, an iota over that loop: splitting and collapsing renumber the
/// loops, and an input's map follows them where linalg.index would not.
linalg::GenericOp indicesAsInputs(IRRewriter &rewriter, linalg::GenericOp op) {
  SmallVector<linalg::IndexOp> reads;
  op.getBody()->walk([&](linalg::IndexOp i) { reads.push_back(i); });
  if (reads.empty())
    return op;
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  Type i64 = rewriter.getI64Type();
  rewriter.setInsertionPoint(op);
  SmallVector<Value> inputs(op.getDpsInputs());
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands())
    maps.push_back(op.getMatchingIndexingMap(in));
  llvm::SmallDenseMap<uint64_t, unsigned> inputOfDim;
  for (linalg::IndexOp read : reads) {
    uint64_t d = read.getDim();
    if (inputOfDim.count(d))
      continue;
    AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
    Value empty = tensor::EmptyOp::create(rewriter, loc, {ranges[d]}, i64);
    Value iota =
        linalg::GenericOp::create(
            rewriter, loc, TypeRange{empty.getType()}, ValueRange(),
            ValueRange{empty}, ArrayRef<AffineMap>{id},
            {utils::IteratorType::parallel},
            [&](OpBuilder &b, Location l, ValueRange) {
              Value i = linalg::IndexOp::create(b, l, 0);
              linalg::YieldOp::create(
                  b, l, Value(arith::IndexCastOp::create(b, l, i64, i)));
            })
            .getResult(0);
    inputOfDim[d] = inputs.size();
    inputs.push_back(iota);
    maps.push_back(AffineMap::get(op.getNumLoops(), 0,
                                  {getAffineDimExpr(d, ctx)}, ctx));
  }
  for (OpOperand &init : op.getDpsInitsMutable())
    maps.push_back(op.getMatchingIndexingMap(&init));
  auto rebuilt = linalg::GenericOp::create(
      rewriter, loc, op.getResultTypes(), inputs, op.getDpsInits(), maps,
      op.getIteratorTypesArray());
  rewriter.inlineRegionBefore(op.getRegion(), rebuilt.getRegion(),
                              rebuilt.getRegion().begin());
  Block &body = rebuilt.getRegion().front();
  unsigned first = op.getNumDpsInputs();
  for (unsigned i = first; i < inputs.size(); ++i)
    body.insertArgument(i, i64, loc);
  for (linalg::IndexOp read : reads) {
    rewriter.setInsertionPoint(read);
    rewriter.replaceOpWithNewOp<arith::IndexCastOp>(
        read, rewriter.getIndexType(),
        body.getArgument(inputOfDim[read.getDim()]));
  }
  rewriter.replaceOp(op, rebuilt.getResults());
  return rebuilt;
}

/// Collapses the reduction loops of `op` into one when there are several
/// and every operand allows it; returns the op to split (or null). Inputs
/// read at a constant go first either way: splitReduction, like collapsing,
/// needs maps of loop indices only (it built an invalid op from the
/// cross-entropy's [rows, 1] targets).
linalg::LinalgOp oneReductionLoop(IRRewriter &rewriter, linalg::GenericOp op) {
  SmallVector<unsigned> dims;
  op.getReductionDims(dims);
  ReassociationIndices group;
  for (unsigned d : dims) {
    if (!group.empty() && d != unsigned(group.back()) + 1)
      return nullptr; // parallel loops between them: not one loop
    group.push_back(d);
  }
  if (!(op = dropUnitConstantDims(rewriter, op)))
    return nullptr;
  if (dims.size() == 1)
    return op;
  if (!linalg::areDimSequencesPreserved(op.getIndexingMapsArray(), {group}))
    return nullptr;
  rewriter.setInsertionPoint(op);
  FailureOr<linalg::CollapseResult> collapsed =
      linalg::collapseOpIterationDims(op, {group}, rewriter);
  if (failed(collapsed))
    return nullptr;
  rewriter.replaceOp(op, collapsed->results);
  return collapsed->collapsedOp;
}

/// A reduction whose reduction loops are not adjacent (batch norm's
/// per-channel sums over N, H and W of [N, C, H, W]) as two: a partial
/// reduction over the innermost adjacent group (H, W) that keeps the outer
/// reduction loops (N) as parallel ones, into [C, N] partials that start at
/// the combiner's neutral element, then a reduction of the partials over N
/// into the original init. Each can then be split (or is small). Returns
/// {partial, final}, or nothing when the body's combiner is not one op
/// that arith knows the neutral element of.
SmallVector<linalg::GenericOp> splitOuterReductions(IRRewriter &rewriter,
                                                    linalg::GenericOp op) {
  SmallVector<unsigned> dims;
  op.getReductionDims(dims);
  SmallVector<unsigned> inner{dims.back()}, outer;
  for (int i = int(dims.size()) - 2; i >= 0; --i) {
    if (outer.empty() && dims[i] + 1 == inner.front())
      inner.insert(inner.begin(), dims[i]);
    else
      outer.insert(outer.begin(), dims[i]);
  }
  if (outer.empty() || op.getNumDpsInits() != 1)
    return {};
  SmallVector<Operation *> combiners;
  Block *body = op.getBody();
  if (!matchReduction(op.getRegionOutputArgs(), 0, combiners) ||
      combiners.size() != 1)
    return {};
  Operation *combiner = combiners.front();
  std::optional<TypedAttr> neutral = arith::getNeutralElement(combiner);
  if (!neutral)
    return {};
  MLIRContext *ctx = op.getContext();
  Location loc = op.getLoc();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  OpOperand *init = op.getDpsInitOperand(0);
  auto initType = cast<RankedTensorType>(init->get().getType());
  AffineMap outMap = op.getMatchingIndexingMap(init);

  // The partials: the output's dims, then the outer reduction loops.
  SmallVector<int64_t> partialShape(initType.getShape());
  SmallVector<AffineExpr> partialExprs(outMap.getResults());
  for (unsigned d : outer) {
    partialShape.push_back(ranges[d]);
    partialExprs.push_back(getAffineDimExpr(d, ctx));
  }
  rewriter.setInsertionPoint(op);
  Value empty = tensor::EmptyOp::create(rewriter, loc, partialShape,
                                        initType.getElementType());
  Value start = arith::ConstantOp::create(rewriter, loc, *neutral);
  Value partialInit =
      linalg::FillOp::create(rewriter, loc, start, empty).getResult(0);
  SmallVector<AffineMap> maps;
  for (OpOperand *in : op.getDpsInputOperands())
    maps.push_back(op.getMatchingIndexingMap(in));
  maps.push_back(AffineMap::get(op.getNumLoops(), 0, partialExprs, ctx));
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  for (unsigned d : outer)
    iters[d] = utils::IteratorType::parallel;
  auto partial = linalg::GenericOp::create(
      rewriter, loc, TypeRange{partialInit.getType()}, op.getDpsInputs(),
      ValueRange{partialInit}, maps, iters);
  rewriter.inlineRegionBefore(op.getRegion(), partial.getRegion(),
                              partial.getRegion().begin());

  // The final reduction: loops = the output's dims, then the outer ones.
  unsigned outRank = initType.getRank(), finalLoops = outRank + outer.size();
  AffineMap all = AffineMap::getMultiDimIdentityMap(finalLoops, ctx);
  SmallVector<utils::IteratorType> finalIters(outRank,
                                              utils::IteratorType::parallel);
  finalIters.append(outer.size(), utils::IteratorType::reduction);
  Value acc = body->getArgument(body->getNumArguments() - 1);
  auto final = linalg::GenericOp::create(
      rewriter, loc, TypeRange{initType}, ValueRange{partial.getResult(0)},
      ValueRange{init->get()},
      ArrayRef<AffineMap>{all, all.getMajorSubMap(outRank)}, finalIters,
      [&](OpBuilder &b, Location l, ValueRange args) {
        IRMapping map;
        for (Value operand : combiner->getOperands())
          map.map(operand, operand == acc ? args[1] : args[0]);
        Value r = b.clone(*combiner, map)->getResult(0);
        linalg::YieldOp::create(b, l, r);
      });
  rewriter.replaceOp(op, final.getResults());
  return {partial, final};
}

struct GpuSplitReductionsPass
    : public rankc::impl::RankcGpuSplitReductionsBase<GpuSplitReductionsPass> {
  using RankcGpuSplitReductionsBase::RankcGpuSplitReductionsBase;

  void runOnOperation() override {
    SmallVector<linalg::GenericOp> reductions;
    getOperation().walk([&](linalg::GenericOp op) {
      // Contractions are GEMMs for cuBLASLt (rankc-gpu-library-calls), which
      // has its own split-K: splitting them here would hide them from it.
      if (op.hasPureTensorSemantics() && op.getNumReductionLoops() > 0 &&
          op.getNumDpsInits() == 1 && failed(rankc::asGemm(op)))
        reductions.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    // The final stage of a split is itself a reduction, split again while
    // it has work for more than one thread: a tree, a few kernels deep.
    while (!reductions.empty()) {
      linalg::GenericOp op = reductions.pop_back_val();
      // A row's reduction with outputs enough runs on a warp per output
      // (WarpReductions.h): one kernel, no partials.
      if (rankc::warpReducible(op))
        continue;
      if (!adjacentReductions(op)) {
        if (wantsSplit(op))
          reductions.append(splitOuterReductions(rewriter, op));
        continue;
      }
      if (auto final = splitOnce(rewriter, op))
        reductions.push_back(final);
    }
  }

  static bool adjacentReductions(linalg::GenericOp op) {
    SmallVector<unsigned> dims;
    op.getReductionDims(dims);
    return dims.back() - dims.front() + 1 == dims.size();
  }

  /// Too few outputs for the GPU's threads, and enough work for a stage
  /// (static sizes; not a serial loop short enough to run as it is). Sets
  /// the number of outputs and of elements each reduces.
  bool wantsSplit(linalg::GenericOp op, int64_t &outputs, int64_t &reduced) {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic))
      return false;
    outputs = reduced = 1;
    for (auto [range, it] : llvm::zip(ranges, op.getIteratorTypesArray()))
      (linalg::isParallelIterator(it) ? outputs : reduced) *= range;
    return outputs * reduced >= minSize && outputs < threads &&
           reduced >= kMinReduced;
  }
  bool wantsSplit(linalg::GenericOp op) {
    int64_t outputs, reduced;
    return wantsSplit(op, outputs, reduced);
  }

  /// Splits `op` into two stages; returns the final stage when it is a
  /// generic worth another look.
  linalg::GenericOp splitOnce(IRRewriter &rewriter, linalg::GenericOp op) {
    int64_t outputs, reduced;
    if (!wantsSplit(op, outputs, reduced))
      return nullptr;
    // Partials per output: the first stage has at most `threads` threads,
    // each taking at least kChunk elements.
    int64_t split = ratioFor(
        reduced, std::min<int64_t>({ratio, reduced / kChunk,
                                    std::max<int64_t>(threads / outputs, 1)}));
    if (split < 2)
      return nullptr;
    op = indicesAsInputs(rewriter, op);
    linalg::LinalgOp one = oneReductionLoop(rewriter, op);
    if (!one)
      return nullptr;
    SmallVector<unsigned> dims;
    one.getReductionDims(dims);
    bool rows = rankc::reducesContiguousDim(one, dims.front());
    // The partials' dimension goes where the next stage reads them well:
    // last for rows (neighbouring threads, neighbouring elements); for
    // columns, last too where the final stage is then a warp's row
    // (WarpReductions.h): one kernel, where partials first made it a
    // column reduction again, split once more (a bias gradient took three
    // kernels). The first stage's neighbouring threads still read
    // neighbouring columns; only its few writes of partials are strided.
    // Otherwise first, so that the final stage's threads read neighbouring
    // partials.
    bool last = rows || rankc::warpSized(outputs, split);
    unsigned index =
        last ? cast<ShapedType>(one.getDpsInitOperand(0)->get().getType())
                   .getRank()
             : 0;
    rewriter.setInsertionPoint(one);
    // Failure (a combiner splitReduction does not know) leaves it as is.
    FailureOr<linalg::SplitReductionResult> result =
        linalg::splitReduction(rewriter, one, [&](linalg::LinalgOp) {
          return linalg::SplitReductionOptions{split, index,
                                               /*innerParallel=*/rows};
        });
    if (failed(result))
      return nullptr;
    return dyn_cast<linalg::GenericOp>(
        result->resultCombiningLinalgOp.getOperation());
  }
};

} // namespace
