//===- GpuLibraryCalls.cpp - contractions to cuBLASLt ---------------------===//
//
// On the GPU, contractions run faster in a tuned library than in any kernel
// rankc-linalg-to-gpu-loops generates: every contraction (a linalg.matmul,
// a batch_matmul, or an einsum's generic: linalg::inferContractionDims) on
// device buffers of f32 or f64 with identity layouts that is one batched
// GEMM, possibly with transposed operands, once each of its batch, M, N
// and K groups of loop dimensions is collapsed, becomes a call of the
// runtime's rankc_rt_gemm (runtime/cuda/CublasLt.cpp), which runs cuBLASLt on
// the stream the kernels use. The fill of zeros that starts the
// accumulator is folded into the call (beta = 0). An operand that is a
// strided view (q, k and v split from one fused projection) is first copied
// to a buffer of its own (a copy kernel of the operand's size, against a
// GEMM left to the kernel generator); a strided result is computed there
// and copied back. A and B may also be bf16 (f16) widened into an f32 C by
// the contraction's body (rankc-gpu-narrow-contractions makes them so):
// cuBLASLt reads them narrow and accumulates in f32. Anything else (f16/
// bf16 contractions that accumulate in their own type; operands whose
// groups interleave) stays for the kernel generator.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/GemmMatch.h"
#include "rankc/Codegen/CUDA/Passes.h"
#include "rankc/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCGPULIBRARYCALLS
#include "rankc/Codegen/CUDA/Passes.h.inc"
} // namespace rankc

using namespace mlir;
using rankc::asGemm;
using rankc::Gemm;

namespace {

/// The generic marked `rankc.gemm_result` that rounds the result of `op`
/// (a GEMM with narrow operands starting from zeros) right after it, into
/// a buffer of identity layout; null if there is none. The ops without
/// effects between them (the view of the rounded buffer) move before `op`,
/// where the call reads that buffer's address.
linalg::GenericOp roundingOf(linalg::LinalgOp op) {
  Value c = op.getDpsInitOperand(0)->get();
  Operation *next = op->getNextNode();
  SmallVector<Operation *> between;
  while (next && isMemoryEffectFree(next) && next->getNumRegions() == 0) {
    between.push_back(next);
    next = next->getNextNode();
  }
  auto round = dyn_cast_or_null<linalg::GenericOp>(next);
  if (!round || !round->hasAttr(rankc::kGemmResult) ||
      !op->hasAttr(rankc::kNarrowOperands) ||
      round.getNumDpsInputs() != 1 || round.getDpsInputs()[0] != c ||
      round.getNumDpsInits() != 1 || !rankc::zeroFillOf(op, c))
    return {};
  auto out = dyn_cast<MemRefType>(round.getDpsInits()[0].getType());
  Type narrow = getElementTypeOrSelf(op.getDpsInputOperand(0)->get().getType());
  if (!out || !out.getLayout().isIdentity() || out.getElementType() != narrow)
    return {};
  for (Operation *pure : between)
    pure->moveBefore(op);
  return round;
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
      if (FailureOr<Gemm> g =
              asGemm(op, /*anyLayout=*/true, /*narrowInputs=*/true);
          op.hasPureBufferSemantics() && succeeded(g))
        gemms.push_back({op, *g});
    });
    if (gemms.empty())
      return;
    OpBuilder b(module.getContext());
    for (auto [op, g] : gemms)
      rankc::stageStridedOperands(
          b, op, [](OpBuilder &b, Location loc, MemRefType type) -> Value {
            return gpu::AllocOp::create(b, loc, type, Type(), ValueRange(),
                                        ValueRange(), ValueRange(), false)
                .getMemref();
          });
    func::FuncOp gemm = rankc::declareGemm(b, module, "rankc_rt_gemm");
    // cuBLAS runs on the kernels' stream: no host wait before it.
    gemm->setAttr(rankc::kStreamOrdered, b.getUnitAttr());
    for (auto [op, g] : gemms) {
      // Operands that are exactly bf16 (f16): the fast compute type's
      // rounding of its inputs changes nothing.
      int code = precisionCode;
      if (auto narrow = op->getAttrOfType<TypeAttr>(rankc::kNarrowOperands))
        code = narrow.getValue().isBF16() ? 2 : 3;
      // Its rounding to bf16 (f16), if it comes right after: written by
      // the call, as it rounds its f32 accumulator.
      linalg::GenericOp round = roundingOf(op);
      rankc::replaceByGemmCall(b, op, g, gemm, code,
                               round ? round.getDpsInits()[0] : Value());
      if (round)
        round->erase();
    }
  }
};

} // namespace
