//===- GpuRecomputeCheapTensors.cpp - recompute what is cheap to make ----===//
//
// Fusion (rankc-fuse-multi-output and upstream's elementwise fusion) keeps
// a tensor that more than one op reads: each reader then reads it from
// memory. Where the tensor is made, element by element, from much less
// than it holds, reading it costs more than making it again: an autocast
// step's log_softmax holds `extf(logit) - max` and `that - log(sum)` in
// f32, 4 bytes an element made from a 2-byte bf16 logit and a value per
// row, each written once and read two or three times; the gradient of a
// cross-entropy's one-hot target is 4 bytes an element made from one
// index per row. Inductor recomputes such producers in their readers; so
// does this pass, on the GPU, where the step is bound by memory.
//
// A generic (on tensors) that is all parallel, has one result written
// through a permutation and never reads that result's init, whose inputs
// hold at most 60% of its result's bytes (bf16 values widened to f32 and
// a value per row, say) or at most as many (and a sixteenth, for a mask)
// read as the result is written (attention's masked, scaled scores: each
// reader then reads as many bytes, in the same order, and the producer's
// read and write go), and whose every use (at most kMaxReaders) is an
// input of a generic that is not a GEMM (cuBLASLt reads GEMMs' operands
// from memory) and reads each element once (a permutation of the reader's
// loops; directly, through a collapse its loops can take, or through an
// expansion that only adds unit dimensions: a reduction's keepdim row), is
// fused into each reader (upstream's linalg::fuseElementwiseOps) and goes.
// Readers made so are looked at in their turn: a chain of such tensors
// goes whole. A generic of several results (fusion's multi-output kernels)
// whose results are each cheap on their own is split into one per result
// first. It runs twice: right after fusion, while attention's
// softmax is still in the exporter's 4-d shapes (rankc-gpu-collapse-dims
// would join the scores' rows and columns, which the mask's map cannot
// follow), and after the passes that shape kernels (split reductions,
// narrow storage), which make more tensors cheap (f32 stored as bf16). It
// only ever removes a tensor and its kernel; the values are the same.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"
#include "rankc/Transforms/GemmMatch.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPURECOMPUTECHEAPTENSORS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Readers beyond which one tensor read is cheaper than as many
/// recomputations (each reader's kernel grows by the producer's body).
constexpr unsigned kMaxReaders = 4;

/// Bytes of a tensor of static shape; -1 if not static.
int64_t bytesOf(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape())
    return -1;
  Type e = t.getElementType();
  int64_t bits = e.isIndex() ? 64 : e.getIntOrFloatBitWidth();
  return t.getNumElements() * ((bits + 7) / 8);
}

/// For an expand_shape that only adds unit dimensions, whether each of its
/// result's dimensions is one of its source's (the others are 1); empty if
/// it splits a dimension.
SmallVector<bool> keptDims(tensor::ExpandShapeOp expand) {
  RankedTensorType src = expand.getSrcType(), dst = expand.getResultType();
  if (!src.hasStaticShape() || !dst.hasStaticShape())
    return {};
  SmallVector<bool> kept(dst.getRank(), false);
  for (auto it : llvm::enumerate(expand.getReassociationIndices())) {
    int64_t size = src.getDimSize(it.index());
    const ReassociationIndices &group = it.value();
    auto keptAt = llvm::find_if(
        group, [&](int64_t d) { return dst.getDimSize(d) == size; });
    if (keptAt == group.end() || llvm::any_of(group, [&](int64_t d) {
          return d != *keptAt && dst.getDimSize(d) != 1;
        }))
      return {};
    kept[*keptAt] = true;
  }
  return kept;
}

/// The generics reading `expand` (unit dimensions added) read its source,
/// the unit dimensions dropped from their maps: each such map result is a
/// loop of extent 1 or the constant 0.
LogicalResult readPastUnitExpand(tensor::ExpandShapeOp expand,
                                 RewriterBase &rewriter) {
  SmallVector<bool> kept = keptDims(expand);
  if (kept.empty())
    return failure();
  for (OpOperand &use : llvm::make_early_inc_range(expand->getUses())) {
    auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
    if (!reader)
      return failure();
    AffineMap map = reader.getMatchingIndexingMap(&use);
    SmallVector<int64_t> ranges = reader.getStaticLoopRanges();
    SmallVector<AffineExpr> results;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      if (kept[i]) {
        results.push_back(e);
        continue;
      }
      auto d = dyn_cast<AffineDimExpr>(e);
      auto c = dyn_cast<AffineConstantExpr>(e);
      if (!(d && ranges[d.getPosition()] == 1) && !(c && c.getValue() == 0))
        return failure();
    }
    SmallVector<AffineMap> maps = reader.getIndexingMapsArray();
    maps[use.getOperandNumber()] =
        AffineMap::get(map.getNumDims(), 0, results, reader.getContext());
    rewriter.modifyOpInPlace(reader, [&] {
      use.set(expand.getSrc());
      reader.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
  }
  rewriter.eraseOp(expand);
  return success();
}

/// Whether `op` is made more cheaply in each of its readers than stored.
bool cheapToRecompute(linalg::GenericOp op) {
  if (!op.hasPureTensorSemantics() || op->getNumResults() != 1 ||
      op.getNumReductionLoops() != 0 ||
      !op.getIndexingMapsArray().back().isPermutation() ||
      op.payloadUsesValueFromOperand(op.getDpsInitOperand(0)))
    return false;
  int64_t out = bytesOf(op->getResult(0).getType()), in = 0;
  AffineMap resultMap = op.getIndexingMapsArray().back();
  // Whether every input of more than an eighth of the result's bytes is
  // read as the result is written (same map): its readers then read it as
  // they read the result, in the same order, no more bytes.
  bool sameLayout = true;
  for (OpOperand *v : op.getDpsInputOperands()) {
    int64_t b = bytesOf(v->get().getType());
    if (b < 0)
      return false;
    in += b;
    if (8 * b > out && op.getMatchingIndexingMap(v) != resultMap)
      sameLayout = false;
  }
  if (out < 0)
    return false;
  // At most 60% (bf16 and a row's values): each reader reads less. Or at
  // most the result's bytes (and a sixteenth: a mask) in the result's
  // layout: each reader reads as much, and the producer's kernel goes.
  if (5 * in > 3 * out && !(sameLayout && 16 * in <= 17 * out))
    return false;
  Value result = op->getResult(0);
  unsigned readers = 0;
  // A reader that reads each element once (through a permutation of all
  // its loops): one that reads it over more loops than it has (a
  // contraction's operand) would compute it as many times over.
  auto reads = [&](OpOperand &use) {
    auto reader = dyn_cast<linalg::GenericOp>(use.getOwner());
    ++readers;
    return reader && reader.isDpsInput(&use) &&
           reader.getMatchingIndexingMap(&use).isPermutation() &&
           failed(rankc::asGemm(reader, /*anyLayout=*/false,
                                /*narrowInputs=*/true));
  };
  for (OpOperand &use : result.getUses()) {
    // Through an expansion that only adds unit dimensions (a reduction's
    // keepdim row, [.., 1, n]): its readers can read the op's result.
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(use.getOwner())) {
      if (keptDims(expand).empty() || !llvm::all_of(expand->getUses(), reads))
        return false;
      continue;
    }
    // Through a collapse of dimensions that op's loops can take (a
    // reduction's rows collapsed by rankc-gpu-collapse-dims): computed
    // collapsed for those readers.
    if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(use.getOwner())) {
      if (!op.getIndexingMapsArray().back().isIdentity() ||
          !linalg::areDimSequencesPreserved(
              op.getIndexingMapsArray(), collapse.getReassociationIndices()) ||
          !llvm::all_of(collapse->getUses(), reads))
        return false;
      continue;
    }
    if (!reads(use) || !linalg::areElementwiseOpsFusable(&use))
      return false;
  }
  return readers > 0 && readers <= kMaxReaders;
}

/// `op`'s inputs read through a map with constant 0 results (a value per
/// row of a [.., 1] tensor) read with those unit dimensions collapsed away
/// instead: upstream's collapse of loops takes projected permutations
/// only. Failure if a map is neither.
LogicalResult withoutUnitBroadcasts(linalg::GenericOp op,
                                    RewriterBase &rewriter) {
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    if (map.isProjectedPermutation())
      continue;
    auto type = dyn_cast<RankedTensorType>(in->get().getType());
    if (!type)
      return failure();
    // Each unit dimension joins the group of the kept one before it (or,
    // leading, after it).
    SmallVector<AffineExpr> kept;
    SmallVector<ReassociationIndices> groups;
    ReassociationIndices leading;
    SmallVector<int64_t> shape;
    for (auto [i, e] : llvm::enumerate(map.getResults())) {
      if (auto c = dyn_cast<AffineConstantExpr>(e)) {
        if (c.getValue() != 0 || type.getDimSize(i) != 1)
          return failure();
        (groups.empty() ? leading : groups.back()).push_back(i);
        continue;
      }
      groups.push_back(leading);
      groups.back().push_back(i);
      leading.clear();
      kept.push_back(e);
      shape.push_back(type.getDimSize(i));
    }
    if (kept.empty())
      return failure(); // a scalar broadcast: rare here, left as it is
    auto newType = RankedTensorType::get(shape, type.getElementType());
    Value collapsed = tensor::CollapseShapeOp::create(
        rewriter, op.getLoc(), newType, in->get(), groups);
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps[in->getOperandNumber()] =
        AffineMap::get(map.getNumDims(), 0, kept, op.getContext());
    rewriter.modifyOpInPlace(op, [&] {
      in->set(collapsed);
      op.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
  }
  return success();
}

/// Fuses `op` into every reader; false if one cannot take it (those
/// before it have). Each fusion but the last keeps `op`'s value as one more
/// result of the fused reader (upstream's fusion does while the producer
/// has other uses); once unused, those results go, here, so that the
/// readers are looked at as they are.
bool recompute(linalg::GenericOp op, RewriterBase &rewriter) {
  Value result = op->getResult(0);
  // Readers through an expansion that only adds unit dimensions read
  // `op` itself.
  for (Operation *user : llvm::to_vector(result.getUsers()))
    if (auto expand = dyn_cast<tensor::ExpandShapeOp>(user))
      if (failed(readPastUnitExpand(expand, rewriter)))
        return false;
  // Readers through a collapse: `op` with its loops collapsed the same
  // way computes the collapsed tensor, and is recomputed in them.
  for (Operation *user : llvm::to_vector(result.getUsers())) {
    auto collapse = dyn_cast<tensor::CollapseShapeOp>(user);
    if (!collapse)
      continue;
    rewriter.setInsertionPoint(op);
    if (failed(withoutUnitBroadcasts(op, rewriter)))
      return false;
    // (Upstream's collapse takes the body of the op it collapses: a clone
    // of `op`, whose result expanded back nobody reads.)
    Operation *clone = rewriter.clone(*op);
    FailureOr<linalg::CollapseResult> collapsed =
        linalg::collapseOpIterationDims(cast<linalg::LinalgOp>(clone),
                                        collapse.getReassociationIndices(),
                                        rewriter);
    if (failed(collapsed)) {
      rewriter.eraseOp(clone);
      return false;
    }
    rewriter.eraseOp(clone);
    for (Value v : collapsed->results)
      if (Operation *def = v.getDefiningOp(); def && def->use_empty())
        rewriter.eraseOp(def);
    auto copy = cast<linalg::GenericOp>(collapsed->collapsedOp.getOperation());
    rewriter.replaceOp(collapse, copy->getResult(0));
    if (!recompute(copy, rewriter))
      return false;
    if (copy->use_empty())
      rewriter.eraseOp(copy);
  }
  SmallVector<Operation *> fusedOps;
  bool done = true;
  while (!result.use_empty()) {
    OpOperand &use = *result.getUses().begin();
    auto reader = cast<linalg::GenericOp>(use.getOwner());
    rewriter.setInsertionPoint(reader);
    if (!linalg::areElementwiseOpsFusable(&use)) {
      done = false;
      break;
    }
    FailureOr<linalg::ElementwiseOpFusionResult> fused =
        linalg::fuseElementwiseOps(rewriter, &use);
    if (failed(fused)) {
      done = false;
      break;
    }
    for (NamedAttribute a : reader->getDiscardableAttrs())
      fused->fusedOp->setAttr(a.getName(), a.getValue());
    for (auto [from, to] : fused->replacements)
      if (from.getDefiningOp() == reader.getOperation())
        rewriter.replaceAllUsesWith(from, to);
    llvm::erase(fusedOps, reader.getOperation());
    rewriter.eraseOp(reader);
    fusedOps.push_back(fused->fusedOp);
  }
  RewritePatternSet patterns(op->getContext());
  linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
  (void)applyOpPatternsGreedily(fusedOps, std::move(patterns));
  return done;
}

/// The generic computing only result `k` of `op` (all parallel, no init
/// read): the inputs its yielded value reads, result k's init and map, the
/// body ops that value depends on. Null if the body has regions.
linalg::GenericOp pieceOf(linalg::GenericOp op, unsigned k,
                          RewriterBase &rewriter) {
  Block *body = op.getBody();
  if (llvm::any_of(*body, [](Operation &x) { return x.getNumRegions(); }))
    return nullptr;
  Value yielded = body->getTerminator()->getOperand(k);
  // The body ops the value depends on, and every value on the way (the
  // block arguments among them are the inputs the piece reads).
  SetVector<Operation *> ops;
  DenseSet<Value> used;
  SmallVector<Value> work{yielded};
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!used.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (def && def->getBlock() == body && ops.insert(def))
      llvm::append_range(work, def->getOperands());
  }
  SmallVector<Value> inputs;
  SmallVector<AffineMap> maps;
  SmallVector<BlockArgument> args;
  for (OpOperand *in : op.getDpsInputOperands()) {
    BlockArgument arg = op.getMatchingBlockArgument(in);
    if (!used.contains(arg))
      continue;
    inputs.push_back(in->get());
    maps.push_back(op.getMatchingIndexingMap(in));
    args.push_back(arg);
  }
  OpOperand *init = op.getDpsInitOperand(k);
  maps.push_back(op.getMatchingIndexingMap(init));
  SmallVector<Operation *> ordered(ops.begin(), ops.end());
  llvm::sort(ordered,
             [](Operation *x, Operation *y) { return x->isBeforeInBlock(y); });
  return linalg::GenericOp::create(
      rewriter, op.getLoc(), TypeRange{op->getResult(k).getType()}, inputs,
      ValueRange{init->get()}, maps, op.getIteratorTypesArray(),
      [&](OpBuilder &b, Location, ValueRange blockArgs) {
        IRMapping map;
        for (auto [from, to] : llvm::zip(args, blockArgs))
          map.map(from, to);
        for (Operation *x : ordered)
          b.clone(*x, map);
        linalg::YieldOp::create(b, op.getLoc(), map.lookupOrDefault(yielded));
      });
}

/// A generic of several results (fusion's multi-output kernels: layer
/// norm's backward yields x_hat, dy * gamma and dy together) split into
/// one generic per used result, placed after it, each with only the
/// inputs and body its result needs, if every piece is cheap to recompute
/// on its own; the first piece, or null (`op` as it was).
Operation *splitIntoCheap(linalg::GenericOp op, RewriterBase &rewriter) {
  if (op->getNumResults() < 2 || !op.hasPureTensorSemantics() ||
      op.getNumReductionLoops() != 0 ||
      llvm::any_of(op.getDpsInitsMutable(), [&](OpOperand &init) {
        return op.payloadUsesValueFromOperand(&init);
      }))
    return nullptr;
  rewriter.setInsertionPointAfter(op);
  SmallVector<linalg::GenericOp> pieces;
  SmallVector<std::pair<OpOperand *, unsigned>> moved;
  bool cheap = true;
  for (OpResult r : op->getResults()) {
    if (r.use_empty())
      continue;
    linalg::GenericOp piece = pieceOf(op, r.getResultNumber(), rewriter);
    if (!piece) {
      cheap = false;
      break;
    }
    pieces.push_back(piece);
    for (OpOperand &use : llvm::make_early_inc_range(r.getUses())) {
      moved.push_back({&use, r.getResultNumber()});
      rewriter.modifyOpInPlace(use.getOwner(),
                               [&] { use.set(piece->getResult(0)); });
    }
  }
  cheap = cheap && pieces.size() > 1 &&
          llvm::all_of(pieces, [](linalg::GenericOp piece) {
            return cheapToRecompute(piece);
          });
  if (!cheap) {
    for (const auto &move : moved)
      rewriter.modifyOpInPlace(move.first->getOwner(), [&] {
        move.first->set(op->getResult(move.second));
      });
    for (linalg::GenericOp piece : pieces)
      rewriter.eraseOp(piece);
    return nullptr;
  }
  Operation *first = op->getNextNode();
  rewriter.eraseOp(op);
  return first;
}

struct GpuRecomputeCheapTensors
    : rankc::impl::RankcGpuRecomputeCheapTensorsBase<GpuRecomputeCheapTensors> {
  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    // In program order: a reader made by fusing comes where its reader
    // was, after the producer, and is looked at when the walk gets there.
    for (Block &block : getOperation().getBody()) {
      for (Operation *op = &block.front(); op;) {
        auto generic = dyn_cast<linalg::GenericOp>(op);
        if (!generic) {
          op = op->getNextNode();
          continue;
        }
        if (!cheapToRecompute(generic)) {
          Operation *first = splitIntoCheap(generic, rewriter);
          op = first ? first : op->getNextNode();
          continue;
        }
        recompute(generic, rewriter);
        op = op->getNextNode();
        if (generic->use_empty())
          rewriter.eraseOp(generic);
      }
    }
  }
};

} // namespace
