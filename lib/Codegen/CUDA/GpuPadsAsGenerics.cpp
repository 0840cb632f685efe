//===- GpuPadsAsGenerics.cpp - a constant pad as one elementwise op -------===//
//
// (What and why: the pass's description in Passes.td.) resnet18's step
// padded 53 tensors so, each a fill kernel and a copy kernel. The generic
// reads its linalg.index values, so rankc-gpu-collapse-dims leaves its
// loops as they are (the mapping takes the three innermost).
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
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
        sourceType.getRank() != type.getRank() || !insert.hasUnitStride() ||
        ShapedType::isDynamicShape(insert.getStaticOffsets()))
      return failure();
    ArrayRef<int64_t> offsets = insert.getStaticOffsets();
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
            if (offsets[d] == 0 && sizes[d] == type.getDimSize(d)) {
              at.push_back(i); // (the whole dimension: always inside)
              continue;
            }
            // i - offset, unsigned below the size: inside on this dim
            // (an index before the offset wraps to a large one).
            Value rel = arith::SubIOp::create(
                b, l, i, arith::ConstantIndexOp::create(b, l, offsets[d]));
            Value in = arith::CmpIOp::create(
                b, l, arith::CmpIPredicate::ult, rel,
                arith::ConstantIndexOp::create(b, l, sizes[d]));
            inside = inside ? arith::AndIOp::create(b, l, inside, in) : in;
            // Outside, read element 0 (any index in bounds: the value is
            // not used).
            at.push_back(arith::SelectOp::create(b, l, in, rel, zero));
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

struct GpuPadsAsGenericsPass
    : public rankc::impl::RankcGpuPadsAsGenericsBase<GpuPadsAsGenericsPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<PadAsGeneric>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
