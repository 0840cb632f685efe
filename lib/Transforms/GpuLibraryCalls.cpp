//===- GpuLibraryCalls.cpp - contractions to cuBLASLt ---------------------===//
//
// On the GPU, contractions run faster in a tuned library than in any kernel
// rankc-linalg-to-gpu-loops generates: every contraction (a linalg.matmul,
// a batch_matmul, or an einsum's generic: linalg::inferContractionDims) on
// device buffers of f32 or f64 with identity layouts that is one batched
// GEMM, possibly with transposed operands, once each of its batch, M, N
// and K groups of loop dimensions is collapsed, becomes a call of the
// runtime's rankc_rt_gemm (runtime/CublasLt.cpp), which runs cuBLASLt on
// the stream the kernels use. The fill of zeros that starts the
// accumulator is folded into the call (beta = 0). An operand that is a
// strided view (q, k and v split from one fused projection) is first copied
// to a buffer of its own (a copy kernel of the operand's size, against a
// GEMM left to the kernel generator); a strided result is computed there
// and copied back. Anything else (f16/bf16, whose contractions accumulate
// in their own type here; operands whose groups interleave) stays for the
// kernel generator.
//
//===----------------------------------------------------------------------===//

#include "GemmMatch.h"
#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Matchers.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPULIBRARYCALLS
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using rankc::asGemm;
using rankc::Gemm;
using rankc::gemmDType;

namespace {

/// The fill of zeros right before `op` that starts its accumulator, if any.
linalg::FillOp zeroFillOf(linalg::LinalgOp op, Value acc) {
  auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode());
  if (!fill || !fill.hasPureBufferSemantics() ||
      fill.getDpsInitOperand(0)->get() != acc)
    return {};
  return matchPattern(fill.getDpsInputOperand(0)->get(), m_AnyZeroFloat())
             ? fill
             : linalg::FillOp();
}

/// Gives every operand of `op` that is a strided view a device buffer of
/// identity layout: inputs are copied in before `op` (linalg.copy, a
/// kernel later), a strided result is copied in too (the GEMM may
/// accumulate into it) and back out after `op`.
void stageStridedOperands(OpBuilder &b, linalg::LinalgOp op) {
  Location loc = op.getLoc();
  // Copies go before the fill that starts the accumulator, if any, so that
  // it stays next to `op` (zeroFillOf).
  Operation *before = op;
  if (auto fill = dyn_cast_or_null<linalg::FillOp>(op->getPrevNode()))
    before = fill;
  for (OpOperand &operand : op->getOpOperands()) {
    auto type = cast<MemRefType>(operand.get().getType());
    if (type.getLayout().isIdentity())
      continue;
    Value view = operand.get();
    b.setInsertionPoint(op.isDpsInit(&operand) ? op.getOperation() : before);
    Value staged =
        gpu::AllocOp::create(
            b, loc, MemRefType::get(type.getShape(), type.getElementType()),
            Type(), ValueRange(), ValueRange(), ValueRange(), false)
            .getMemref();
    linalg::CopyOp::create(b, loc, view, staged);
    operand.set(staged);
    if (op.isDpsInit(&operand)) {
      b.setInsertionPointAfter(op);
      linalg::CopyOp::create(b, loc, staged, view);
    }
  }
}

struct GpuLibraryCallsPass
    : public rankc::impl::RankcGpuLibraryCallsBase<GpuLibraryCallsPass> {
  using RankcGpuLibraryCallsBase::RankcGpuLibraryCallsBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    // The runtime's codes (rankc_runtime.h: RANKC_PRECISION_*).
    int precisionCode = precision == "tf32" ? 1 : precision == "bf16" ? 2 : 0;
    if (precision != "f32" && precisionCode == 0) {
      module.emitError() << "unknown precision '" << precision
                         << "' (f32, tf32 or bf16)";
      return signalPassFailure();
    }
    SmallVector<std::pair<linalg::LinalgOp, Gemm>> gemms;
    module.walk([&](linalg::LinalgOp op) {
      if (FailureOr<Gemm> g = asGemm(op, /*anyLayout=*/true);
          op.hasPureBufferSemantics() && succeeded(g))
        gemms.push_back({op, *g});
    });
    if (gemms.empty())
      return;
    OpBuilder b(module.getContext());
    for (auto [op, g] : gemms)
      stageStridedOperands(b, op);
    Type index = b.getIndexType(), i64 = b.getI64Type(), i32 = b.getI32Type();
    auto gemm = module.lookupSymbol<func::FuncOp>("rankc_rt_gemm");
    if (!gemm) {
      b.setInsertionPointToEnd(module.getBody());
      gemm = func::FuncOp::create(
          b, module.getLoc(), "rankc_rt_gemm",
          b.getFunctionType(
              {index, index, index, i64, i64, i64, i64, i32, i32, i32, i32, i32,
               i32},
              {}));
      gemm.setPrivate();
    }
    // cuBLAS runs on the kernels' stream: no host wait before it.
    gemm->setAttr(rankc::kStreamOrdered, b.getUnitAttr());
    for (auto [op, g] : gemms) {
      Location loc = op.getLoc();
      Value a = op.getDpsInputOperand(0)->get(),
            bm = op.getDpsInputOperand(1)->get(),
            c = op.getDpsInitOperand(0)->get();
      auto aType = cast<MemRefType>(a.getType());
      bool accumulate = true;
      if (linalg::FillOp fill = zeroFillOf(op, c)) {
        fill->erase();
        accumulate = false;
      }
      b.setInsertionPoint(op);
      auto ptr = [&](Value v) -> Value {
        return memref::ExtractAlignedPointerAsIndexOp::create(b, loc, v);
      };
      auto i64c = [&](int64_t v) -> Value {
        return arith::ConstantIntOp::create(b, loc, v, 64);
      };
      auto i32c = [&](int64_t v) -> Value {
        return arith::ConstantIntOp::create(b, loc, v, 32);
      };
      Value pa = ptr(a), pb = ptr(bm), pc = ptr(c);
      func::CallOp::create(
          b, loc, gemm,
          ValueRange{pa, pb, pc, i64c(g.batch), i64c(g.m), i64c(g.n),
                     i64c(g.k), i32c(gemmDType(aType.getElementType())),
                     i32c(accumulate), i32c(g.transA), i32c(g.transB),
                     i32c(precisionCode), i32c(g.broadcastB)});
      op->erase();
    }
  }
};

} // namespace
