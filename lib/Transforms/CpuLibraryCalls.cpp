//===- CpuLibraryCalls.cpp - contractions to the system BLAS --------------===//
//
// On the CPU, the loops linalg-to-loops makes of a matmul run at a tenth
// of a tuned BLAS's speed or less (no tiling for the caches, no register
// blocking): every contraction that is one batched GEMM (GemmMatch.h, the
// same match as the GPU's cuBLASLt calls) on host buffers of f32 or f64
// becomes a call of the runtime's rankc_rt_cpu_gemm (runtime/Blas.cpp,
// which opens OpenBLAS or another CBLAS at run time). The zero fill that
// starts the accumulator is folded into the call (beta = 0); strided
// operands are staged through buffers of their own (memref.alloc, from the
// step's arena), a copy of the operand's size against a GEMM's k times as
// many operations.
//
//===----------------------------------------------------------------------===//

#include "GemmMatch.h"
#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCCPULIBRARYCALLS
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

struct CpuLibraryCallsPass
    : public rankc::impl::RankcCpuLibraryCallsBase<CpuLibraryCallsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SmallVector<std::pair<linalg::LinalgOp, rankc::Gemm>> gemms;
    module.walk([&](linalg::LinalgOp op) {
      if (FailureOr<rankc::Gemm> g = rankc::asGemm(op, /*anyLayout=*/true);
          op.hasPureBufferSemantics() && succeeded(g))
        gemms.push_back({op, *g});
    });
    if (gemms.empty())
      return;
    OpBuilder b(module.getContext());
    for (auto [op, g] : gemms)
      rankc::stageStridedOperands(
          b, op, [](OpBuilder &b, Location loc, MemRefType type) -> Value {
            return memref::AllocOp::create(b, loc, type);
          });
    func::FuncOp gemm = rankc::declareGemm(b, module, "rankc_rt_cpu_gemm");
    for (auto [op, g] : gemms)
      rankc::replaceByGemmCall(b, op, g, gemm, /*precision=*/0);
  }
};

} // namespace
