//===- FuseElementwise.cpp - elementwise fusion that keeps GEMMs whole ----===//
//
// Upstream's linalg-fuse-elementwise-ops, with two changes so that library
// GEMMs (cuBLASLt on the GPU, a BLAS on the CPU) stay whole:
//  - transposes and matmuls are generalized first, so that a transpose
//    (the exporter writes x @ W^T as transpose then matmul, and autograd
//    transposes again) folds into the contraction that reads it as a
//    permuted indexing map: rankc-{gpu,cpu}-library-calls then pass it
//    to the library as a transposed operand instead of a loop nest that
//    copies 64 MB through strided loads;
//  - a contraction takes in only such data movement (a generic whose body
//    just yields an input), never arithmetic, which would make it a
//    generated kernel instead of a GEMM. Data movement folds into every
//    consumer even when it has several (reading through a permuted map
//    costs what the transpose's own read costs, and saves its write): each
//    user gets its own copy first.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/GemmMatch.h"
#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCFUSEELEMENTWISE
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// A generic that only moves data: its body yields one of its inputs.
bool movesOnly(Operation *op) {
  auto generic = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInits() != 1 ||
      generic.getNumReductionLoops() != 0)
    return false;
  Block &body = generic.getRegion().front();
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  if (&body.front() != yield.getOperation())
    return false; // computes something
  auto arg = dyn_cast<BlockArgument>(yield.getOperand(0));
  return arg && arg.getArgNumber() < generic.getNumDpsInputs();
}

/// Whether `consumer`, a GEMM, stays one once the data movement that
/// defines `fused` is folded into it: a transpose whose permuted read
/// splits the reduced dimensions apart (dW = sum over batch and sequence of
/// dY^T X, with dY stored [batch, d, seq]) would turn it into a generated
/// kernel that reduces thousands of elements per thread. Tried on an
/// unlinked clone with the fused operand and map, as the fusion would make.
bool staysGemm(linalg::GenericOp consumer, OpOperand *fused,
               linalg::GenericOp mover) {
  if (failed(rankc::asGemm(consumer)))
    return true; // not a GEMM anyway: nothing to keep
  AffineMap out = mover.getIndexingMapsArray().back();
  AffineMap in = mover.getIndexingMapsArray().front();
  if (!out.isPermutation())
    return false;
  // Consumer loops -> the mover's result -> its loops -> its input.
  AffineMap through = in.compose(inversePermutation(out))
                          .compose(consumer.getMatchingIndexingMap(fused));
  Operation *trial = consumer->clone();
  auto clone = cast<linalg::GenericOp>(trial);
  unsigned index = fused->getOperandNumber();
  trial->setOperand(index, mover.getDpsInputOperand(0)->get());
  SmallVector<AffineMap> maps = clone.getIndexingMapsArray();
  maps[index] = through;
  clone.setIndexingMapsAttr(
      Builder(consumer.getContext()).getAffineMapArrayAttr(maps));
  bool gemm = succeeded(rankc::asGemm(clone));
  trial->destroy();
  return gemm;
}

bool shouldFuse(OpOperand *fused) {
  Operation *producer = fused->get().getDefiningOp();
  if (!producer)
    return false;
  auto consumer = dyn_cast<linalg::GenericOp>(fused->getOwner());
  if (consumer && linalg::isaContractionOpInterface(consumer))
    return movesOnly(producer) &&
           staysGemm(consumer, fused, cast<linalg::GenericOp>(producer));
  return producer->hasOneUse();
}

/// Gives each user of a data-movement generic its own copy: fusing a
/// producer that has other users keeps its result as an extra output of
/// the fused op, and a contraction with two outputs is no GEMM any more.
/// One copy per user fuses away entirely (the copy is free inside its
/// consumer: the consumer reads through the permuted map instead).
void oneMoverPerUser(IRRewriter &rewriter, Operation *root) {
  SmallVector<linalg::GenericOp> movers;
  root->walk([&](linalg::GenericOp op) {
    // Two uses or more: an unused mover (a value a program computes but
    // neither outputs nor sends) has nothing to copy, and drop_begin of its
    // empty use list would walk off its end.
    Value result = op->getResult(0);
    if (movesOnly(op) && op.hasPureTensorSemantics() && !result.use_empty() &&
        !result.hasOneUse())
      movers.push_back(op);
  });
  for (linalg::GenericOp op : movers) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : op->getResult(0).getUses())
      uses.push_back(&use);
    for (OpOperand *use : llvm::drop_begin(uses)) {
      rewriter.setInsertionPoint(use->getOwner());
      Operation *copy = rewriter.clone(*op);
      rewriter.modifyOpInPlace(use->getOwner(),
                               [&] { use->set(copy->getResult(0)); });
    }
  }
}

struct FuseElementwisePass
    : public rankc::impl::RankcFuseElementwiseBase<FuseElementwisePass> {
  /// The patterns, built once: the pass runs on every function of a
  /// program (a thousand parts at 10^5 nodes), on the context's threads.
  LogicalResult initialize(MLIRContext *ctx) override {
    RewritePatternSet set(ctx);
    linalg::populateElementwiseOpsFusionPatterns(set, shouldFuse);
    linalg::ControlFusionFn oneUse = [](OpOperand *fused) {
      Operation *producer = fused->get().getDefiningOp();
      return producer && producer->hasOneUse();
    };
    linalg::populateFoldReshapeOpsByExpansionPatterns(set, oneUse);
    tensor::populateBubbleUpExpandShapePatterns(set);
    affine::AffineApplyOp::getCanonicalizationPatterns(set, ctx);
    linalg::GenericOp::getCanonicalizationPatterns(set, ctx);
    tensor::ExpandShapeOp::getCanonicalizationPatterns(set, ctx);
    tensor::CollapseShapeOp::getCanonicalizationPatterns(set, ctx);
    ctx->getLoadedDialect<linalg::LinalgDialect>()->getCanonicalizationPatterns(
        set);
    linalg::populateConstantFoldLinalgOperations(set, oneUse);
    patterns = FrozenRewritePatternSet(std::move(set));
    return success();
  }

  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> named;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (isa<linalg::TransposeOp, linalg::MatmulOp, linalg::BatchMatmulOp>(
              op.getOperation()) &&
          op.hasPureTensorSemantics())
        named.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : named) {
      rewriter.setInsertionPoint(op);
      (void)linalg::generalizeNamedOp(rewriter, op);
    }
    oneMoverPerUser(rewriter, getOperation());
    GreedyRewriteConfig config;
    config.setUseTopDownTraversal(true);
    if (failed(applyPatternsGreedily(getOperation(), patterns, config)))
      signalPassFailure();
  }

  FrozenRewritePatternSet patterns;
};

} // namespace
