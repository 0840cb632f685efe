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
// widened values with `rankc.narrow_operands = bf16` (or f16);
// rankc-gpu-library-calls then asks for the fast compute type.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CUDA/Passes.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPUNARROWCONTRACTIONS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// The float type every element of `v` was widened from, through layout
/// ops (transposes, reshapes, slices) to a linalg.generic whose yielded
/// value is an arith.extf; null when not known.
Type widenedFrom(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto t = dyn_cast<linalg::TransposeOp>(def)) {
      v = t.getInput();
    } else if (isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp,
                   tensor::ExtractSliceOp, tensor::CastOp>(def)) {
      v = def->getOperand(0);
    } else if (auto g = dyn_cast<linalg::GenericOp>(def)) {
      auto yield = cast<linalg::YieldOp>(g.getBody()->getTerminator());
      unsigned i = cast<OpResult>(v).getResultNumber();
      auto ext = yield.getOperand(i).getDefiningOp<arith::ExtFOp>();
      if (!ext)
        return {};
      Type narrow = ext.getIn().getType();
      return narrow.isBF16() || narrow.isF16() ? narrow : Type();
    } else {
      return {};
    }
  }
  return {};
}

struct GpuNarrowContractionsPass
    : public rankc::impl::RankcGpuNarrowContractionsBase<
          GpuNarrowContractionsPass> {
  void runOnOperation() override {
    getOperation().walk([&](linalg::LinalgOp op) {
      if (!op.hasPureTensorSemantics() || op.getNumDpsInputs() != 2 ||
          !linalg::isaContractionOpInterface(op) ||
          !getElementTypeOrSelf(op.getDpsInits()[0].getType()).isF32())
        return;
      Type a = widenedFrom(op.getDpsInputs()[0]),
           b = widenedFrom(op.getDpsInputs()[1]);
      if (a && a == b)
        op->setAttr(rankc::kNarrowOperands, TypeAttr::get(a));
    });
  }
};

} // namespace
