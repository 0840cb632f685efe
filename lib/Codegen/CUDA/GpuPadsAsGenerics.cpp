//===- GpuPadsAsGenerics.cpp - a constant pad as one elementwise op -------===//
//
// (What and why: the pass's description in Passes.td.) resnet18's step
// padded 53 tensors so, each a fill kernel and a copy kernel. The generic
// reads its linalg.index values, so rankc-gpu-collapse-dims leaves its
// loops as they are where it has three or four (the mapping takes the
// three innermost and joins the rest into z's blocks).
//
// A copy that reads such a pad (resnet18's im2col copies, 20 of them in a
// step, each reading the padded x nine times over) then computes the pad
// itself: the padded tensor (as big as x) is neither written nor read.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUPADSASGENERICS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

struct PadAsGeneric : OpRewritePattern<tensor::InsertSliceOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(tensor::InsertSliceOp insert,
                                PatternRewriter &rewriter) const override {
    auto fill = insert.getDest().getDefiningOp<linalg::FillOp>();
    if (!fill || !fill->hasOneUse() || !fill.hasPureTensorSemantics())
      return failure();
    auto empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
    RankedTensorType type = insert.getDestType();
    RankedTensorType sourceType = insert.getSourceType();
    if (!empty || !type.hasStaticShape() || !sourceType.hasStaticShape() ||
        sourceType.getRank() != type.getRank() ||
        ShapedType::isDynamicShape(insert.getStaticOffsets()) ||
        ShapedType::isDynamicShape(insert.getStaticStrides()) ||
        sourceType.getNumElements() == 0)
      return failure();
    ArrayRef<int64_t> offsets = insert.getStaticOffsets();
    ArrayRef<int64_t> strides = insert.getStaticStrides();
    ArrayRef<int64_t> sizes = sourceType.getShape();
    Value pad = fill.getInputs()[0];
    Value source = insert.getSource();
    Location loc = insert.getLoc();
    int64_t rank = type.getRank();
    MLIRContext *ctx = rewriter.getContext();
    SmallVector<AffineMap> maps{AffineMap::getMultiDimIdentityMap(rank, ctx)};
    SmallVector<utils::IteratorType> iterators(rank,
                                               utils::IteratorType::parallel);
    auto generic = linalg::GenericOp::create(
        rewriter, loc, TypeRange{type}, ValueRange{}, ValueRange{empty},
        maps, iterators, [&](OpBuilder &b, Location l, ValueRange) {
          Value inside;
          SmallVector<Value> at;
          Value zero = arith::ConstantIndexOp::create(b, l, 0);
          for (int64_t d = 0; d < rank; ++d) {
            Value i = linalg::IndexOp::create(b, l, d);
            if (offsets[d] == 0 && sizes[d] == type.getDimSize(d) &&
                strides[d] == 1) {
              at.push_back(i); // (the whole dimension: always inside)
              continue;
            }
            // i - offset, unsigned below the span: inside on this dim
            // (an index before the offset wraps to a large one).
            Value rel = arith::SubIOp::create(
                b, l, i, arith::ConstantIndexOp::create(b, l, offsets[d]));
            int64_t stride = strides[d];
            Value in = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ult, rel,
                arith::ConstantIndexOp::create(b, l,
                                               (sizes[d] - 1) * stride + 1));
            Value element = rel;
            if (stride != 1) {
              // Strided (a convolution's input dilation, the gradient of
              // a strided one): only every stride-th place holds an
              // element, the others the pad value.
              Value s = arith::ConstantIndexOp::create(b, l, stride);
              Value onGrid = arith::CmpIOp::create(
                  b, l, arith::CmpIPredicate::eq,
                  arith::RemUIOp::create(b, l, rel, s), zero);
              in = arith::AndIOp::create(b, l, in, onGrid);
              element = arith::DivUIOp::create(b, l, rel, s);
            }
            inside = inside ? arith::AndIOp::create(b, l, inside, in) : in;
            // Outside, read element 0 (any index in bounds: the value is
            // not used).
            at.push_back(arith::SelectOp::create(b, l, in, element, zero));
          }
          Value value = tensor::ExtractOp::create(b, l, source, at);
          if (inside)
            value = arith::SelectOp::create(b, l, inside, value, pad);
          linalg::YieldOp::create(b, l, value);
        });
    rewriter.replaceOp(insert, generic.getResults());
    rewriter.eraseOp(fill);
    return success();
  }
};

/// Whether `g` computes its one result from its indices alone (no inputs,
/// loops all parallel, the result written in loop order): what
/// PadAsGeneric makes.
bool fromIndicesOnly(linalg::GenericOp g) {
  return g && g.getNumDpsInputs() == 0 && g.getNumDpsInits() == 1 &&
         g.hasPureTensorSemantics() &&
         g.getNumParallelLoops() == g.getNumLoops() &&
         g.getIndexingMapsArray()[0].isIdentity() &&
         !g.payloadUsesValueFromOperand(g.getDpsInitOperand(0));
}

/// Whether `g` copies its one input's elements to its result (with any
/// read map): yields its input's block argument, loops all parallel.
bool isCopy(linalg::GenericOp g) {
  if (g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      !g.hasPureTensorSemantics() ||
      g.getNumParallelLoops() != g.getNumLoops())
    return false;
  Block *body = g.getBody();
  return &body->front() == body->getTerminator() &&
         body->getTerminator()->getOperand(0) == body->getArgument(0);
}

/// `map`'s results (indices into the result of `expand`) as indices into
/// its source: each group of dims linearized (static sizes).
std::optional<AffineMap> throughExpand(AffineMap map,
                                       tensor::ExpandShapeOp expand) {
  RankedTensorType type = expand.getResultType();
  if (!type.hasStaticShape())
    return std::nullopt;
  SmallVector<AffineExpr> results;
  for (ReassociationIndices group : expand.getReassociationIndices()) {
    AffineExpr index = getAffineConstantExpr(0, map.getContext());
    for (int64_t d : group)
      index = index * type.getDimSize(d) + map.getResult(d);
    results.push_back(index);
  }
  return AffineMap::get(map.getNumDims(), 0, results, map.getContext());
}

struct PadIntoCopy : OpRewritePattern<linalg::GenericOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(linalg::GenericOp copy,
                                PatternRewriter &rewriter) const override {
    if (!isCopy(copy))
      return failure();
    OpOperand *in = copy.getDpsInputOperand(0);
    AffineMap map = copy.getMatchingIndexingMap(in);
    Value source = in->get();
    if (auto expand = source.getDefiningOp<tensor::ExpandShapeOp>()) {
      std::optional<AffineMap> folded = throughExpand(map, expand);
      if (!folded)
        return failure();
      map = *folded;
      source = expand.getSrc();
    }
    auto pad = source.getDefiningOp<linalg::GenericOp>();
    if (!fromIndicesOnly(pad))
      return failure();
    // (What upstream's fusion asks of the pair: the read's results index
    // the pad's loops.)
    if (map.getNumResults() != pad.getNumLoops())
      return failure();
    // The copy fuses a clone of its own: where the pad has other readers
    // (equal pads merged, or the reshape read by others), fusion need not
    // keep the padded tensor as a result. The pad (and the reshape) go,
    // as dead, once every reader has done so.
    rewriter.setInsertionPoint(pad);
    Operation *clone = rewriter.clone(*pad);
    Value read = in->get();
    SmallVector<AffineMap> maps = copy.getIndexingMapsArray(), before = maps;
    maps[0] = map;
    rewriter.modifyOpInPlace(copy, [&] {
      in->set(clone->getResult(0));
      copy.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(maps));
    });
    rewriter.setInsertionPoint(copy);
    FailureOr<linalg::ElementwiseOpFusionResult> fused =
        linalg::fuseElementwiseOps(rewriter, in);
    if (failed(fused)) {
      // (Not expected, as checked above: the copy as it was.)
      rewriter.modifyOpInPlace(copy, [&] {
        in->set(read);
        copy.setIndexingMapsAttr(rewriter.getAffineMapArrayAttr(before));
      });
      rewriter.eraseOp(clone);
      return failure();
    }
    rewriter.replaceOp(copy,
                       fused->replacements.lookup(copy->getResult(0)));
    return success();
  }
};

struct GpuPadsAsGenericsPass
    : public rankc::impl::RankcGpuPadsAsGenericsBase<GpuPadsAsGenericsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PadAsGeneric, PadIntoCopy>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
