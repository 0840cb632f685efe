//===- GpuNarrowContractions.cpp - contractions of widened bf16/f16 -------===//
//
// dag-format.md v3 makes a bf16 matmul an f32 one between casts (f32
// accumulation, one rounding), and the frontend builds it that way: its
// operands are bf16 values widened by arith.extf. cuBLASLt's f32 GEMM with
// CUBLAS_COMPUTE_32F_FAST_16BF rounds its inputs to bf16 and accumulates
// in f32 on tensor cores; on inputs that are exactly bf16 that rounding
// changes nothing, so the fast GEMM computes the same contraction 10x
// faster than the exact f32 one. This pass, on tensors (where each operand
// has one producer), marks each contraction whose two operands are such
// widened values with `rankc.narrow_operands = bf16` (or f16): directly,
// or moved by layout ops, padding of exact constants, copies (a bf16
// convolution's im2col GEMM, dag-format.md v3's rule for conv) and
// concatenation (insert_slices covering an empty tensor);
// rankc-gpu-library-calls then asks for the fast compute type.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

#include "NarrowOperands.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUNARROWCONTRACTIONS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using rankc::exactIn;
using rankc::yieldsNarrowFrom;

namespace {

/// How deep the search below follows a value's producers: the chains it
/// sees (casts, pads, im2col copies, reshapes) are a few ops long; the
/// bound keeps a tree of insert_slices from costing more than that.
constexpr int kMaxDepth = 32;

bool allNarrow(Value v, FloatType narrow, int depth = 0);

/// Whether every element of a chain of insert_slices ending in `top` is
/// narrow: each inserted value is, and so is what they are inserted into,
/// or that is a tensor.empty that the slices cover exactly (a concat
/// written as insert_slices: q, k and v's gradients side by side).
bool insertsNarrow(tensor::InsertSliceOp top, FloatType narrow, int depth) {
  SmallVector<tensor::InsertSliceOp> chain;
  Value base = top.getResult();
  while (auto ins = base.getDefiningOp<tensor::InsertSliceOp>()) {
    if (int(chain.size()) > kMaxDepth ||
        !allNarrow(ins.getSource(), narrow, depth + 1))
      return false;
    chain.push_back(ins);
    base = ins.getDest();
  }
  if (!base.getDefiningOp<tensor::EmptyOp>())
    return allNarrow(base, narrow, depth + 1);
  // Static slices of unit strides, pairwise disjoint, whose volumes sum to
  // the whole: every element of the empty tensor is overwritten.
  auto type = cast<RankedTensorType>(base.getType());
  if (!type.hasStaticShape())
    return false;
  int64_t covered = 0;
  for (auto [i, a] : llvm::enumerate(chain)) {
    if (!a.hasUnitStride() ||
        ShapedType::isDynamicShape(a.getStaticOffsets()) ||
        ShapedType::isDynamicShape(a.getStaticSizes()))
      return false;
    int64_t volume = 1;
    for (int64_t size : a.getStaticSizes())
      volume *= size;
    covered += volume;
    for (tensor::InsertSliceOp b : ArrayRef(chain).take_front(i)) {
      bool apart = false;
      for (auto [ao, as, bo, bs] :
           llvm::zip(a.getStaticOffsets(), a.getStaticSizes(),
                     b.getStaticOffsets(), b.getStaticSizes()))
        apart |= ao + as <= bo || bo + bs <= ao;
      if (!apart)
        return false;
    }
  }
  return covered == type.getNumElements();
}

/// Whether every element of `v` is exactly a value of the float type
/// `narrow`: an arith.extf from it, a fill or splat of a constant that
/// converts to it without loss (a convolution's zero padding), or any
/// number of ops that only move such elements: layout ops (transposes,
/// reshapes, slices), an insert_slice of such a value into another (the
/// padded, input-dilated x of a convolution), and a linalg.generic whose
/// result yields one of its operands' elements unchanged (im2col's copy of
/// the windows, or a constant pad written as one generic).
bool allNarrow(Value v, FloatType narrow, int depth) {
  if (depth > kMaxDepth)
    return false;
  auto exact = [&](Attribute a) { return exactIn(a, narrow); };
  Operation *def = v.getDefiningOp();
  if (!def)
    return false;
  if (auto ext = dyn_cast<arith::ExtFOp>(def))
    return getElementTypeOrSelf(ext.getIn().getType()) == narrow;
  if (auto c = dyn_cast<arith::ConstantOp>(def)) {
    auto splat = dyn_cast<SplatElementsAttr>(c.getValue());
    return exact(splat ? splat.getSplatValue<Attribute>() : c.getValue());
  }
  if (auto t = dyn_cast<linalg::TransposeOp>(def))
    return allNarrow(t.getInput(), narrow, depth + 1);
  if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
          tensor::ExtractSliceOp, tensor::CastOp>(def))
    return allNarrow(def->getOperand(0), narrow, depth + 1);
  if (auto ins = dyn_cast<tensor::InsertSliceOp>(def))
    return insertsNarrow(ins, narrow, depth);
  if (auto fill = dyn_cast<linalg::FillOp>(def)) {
    Attribute c;
    return matchPattern(fill.getInputs()[0], m_Constant(&c)) && exact(c);
  }
  auto g = dyn_cast<linalg::GenericOp>(def);
  if (!g)
    return false;
  auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
  return yieldsNarrowFrom(
      g, yield.getOperand(cast<OpResult>(v).getResultNumber()), narrow,
      depth + 1, kMaxDepth,
      [&](Value t, int at) { return allNarrow(t, narrow, at + 1); });
}

struct GpuNarrowContractionsPass
    : public rankc::impl::RankcGpuNarrowContractionsBase<
          GpuNarrowContractionsPass> {
  void runOnOperation() override {
    SmallVector<std::pair<linalg::LinalgOp, FloatType>> marked;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
          !linalg::isaContractionOpInterface(op) ||
          !getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
        return;
      Builder b(op.getContext());
      for (FloatType narrow : {b.getBF16Type(), b.getF16Type()})
        if (allNarrow(op.getDpsInputs()[0], narrow) &&
            allNarrow(op.getDpsInputs()[1], narrow)) {
          op->setAttr(rankc::kNarrowOperands, TypeAttr::get(narrow));
          marked.push_back({op, narrow});
          return;
        }
    });
    // Then each reads the narrow values themselves where it can
    // (NarrowOperands.cpp).
    IRRewriter rewriter(&getContext());
    Builder b(&getContext());
    rankc::NarrowCopies bf16(b.getBF16Type()), f16(b.getF16Type());
    for (auto [op, narrow] : marked)
      rankc::readNarrowOperands(op, narrow.isBF16() ? bf16 : f16, rewriter);
    // The widened copies nothing reads now: their generics gone, or the
    // result dropped from a generic that yields others (a kernel less, or
    // one that writes half the bytes).
    if (marked.empty())
      return;
    RewritePatternSet cleanup(&getContext());
    linalg::populateEraseUnusedOperandsAndResultsPatterns(cleanup);
    if (failed(applyPatternsGreedily(getOperation(), std::move(cleanup))))
      return signalPassFailure();
  }
};

} // namespace
