//===- CpuLibraryCalls.cpp - contractions to the system BLAS --------------===//
//
// On the CPU, the loops linalg-to-loops makes of a matmul run at a tenth
// of a tuned BLAS's speed or less (no tiling for the caches, no register
// blocking): every contraction that is one batched GEMM (GemmMatch.h, the
// same match as the GPU's cuBLASLt calls) on host buffers of f32 or f64
// becomes a call of the runtime's rankc_rt_cpu_gemm (runtime/host/Blas.cpp,
// which opens OpenBLAS or another CBLAS at run time). The zero fill that
// starts the accumulator is folded into the call (beta = 0); strided
// operands are staged through buffers of their own (memref.alloc, from the
// step's arena), a copy of the operand's size against a GEMM's k times as
// many operations.
//
// Under --threads N (option `threads`), a GEMM large enough to pay for a
// fork of the threads is shared among them by slices of C's rows or
// columns: an scf.parallel of up to N iterations (OpenMP once
// convert-scf-to-openmp has run), each calling rankc_rt_cpu_gemm_block on
// its slice with a single-threaded BLAS. Every element of C is still a sum
// over all of K in one thread (though the BLAS may pick other kernels for
// a slice than for the whole, so the rounding may differ).
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/GemmMatch.h"
#include "rankc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCCPULIBRARYCALLS
#include "rankc/Codegen/CPU/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Multiply-adds below which a GEMM runs on one thread: below it the fork,
/// the join and the threads' waits at it cost more than the split saves
/// (2^20 made the exported transformer step no faster on 2 threads than
/// on 1; 2^22 made it 1.6x faster).
constexpr double kMinSharedWork = 1 << 22;

/// Replaces `call` (of rankc_rt_cpu_gemm, for the GEMM `g`) by an
/// scf.parallel over up to `threads` slices of C, each a call of `block`
/// (rankc_rt_cpu_gemm_block) on its slice: slices of rows where C has at
/// least as many rows as columns, else of columns (a training step's
/// forward GEMMs have as many rows as the batch, 64 say, and thousands of
/// columns), and no slice thinner than kMinSlice.
constexpr int64_t kMinSlice = 16;
void shareBySlices(OpBuilder &b, func::CallOp call, const rankc::Gemm &g,
                   func::FuncOp block, int64_t threads) {
  Location loc = call.getLoc();
  bool byRows = g.m >= g.n;
  int64_t extent = byRows ? g.m : g.n;
  int64_t slices = std::max<int64_t>(
      1, std::min(threads, extent / kMinSlice));
  int64_t chunk = (extent + slices - 1) / slices;
  slices = (extent + chunk - 1) / chunk; // no empty slice
  if (slices < 2)
    return;
  b.setInsertionPoint(call);
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  Value n = arith::ConstantIndexOp::create(b, loc, slices);
  SmallVector<Value> args(call.getOperands());
  scf::ParallelOp::create(
      b, loc, ValueRange{zero}, ValueRange{n}, ValueRange{one},
      [&](OpBuilder &nb, Location l, ValueRange ivs) {
        Value t = arith::IndexCastOp::create(nb, l, nb.getI64Type(), ivs[0]);
        Value size = arith::ConstantIntOp::create(nb, l, chunk, 64);
        // The last slice's end may pass the matrix: the runtime clamps.
        Value lo = arith::MulIOp::create(nb, l, t, size);
        Value hi = arith::AddIOp::create(nb, l, lo, size);
        Value zero64 = arith::ConstantIntOp::create(nb, l, 0, 64);
        Value m = arith::ConstantIntOp::create(nb, l, g.m, 64);
        Value cols = arith::ConstantIntOp::create(nb, l, g.n, 64);
        SmallVector<Value> withBlock(args);
        if (byRows)
          withBlock.append({lo, hi, zero64, cols});
        else
          withBlock.append({zero64, m, lo, hi});
        func::CallOp::create(nb, l, block, withBlock);
      });
  call.erase();
}

struct CpuLibraryCallsPass
    : public rankc::impl::RankcCpuLibraryCallsBase<CpuLibraryCallsPass> {
  using Base::Base;
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
    func::FuncOp block;
    for (auto [op, g] : gemms) {
      func::CallOp call =
          rankc::replaceByGemmCall(b, op, g, gemm, /*precision=*/0);
      double work = double(g.batch) * double(g.m) * double(g.n) * double(g.k);
      if (threads < 2 || std::max(g.m, g.n) < 2 * kMinSlice ||
          work < kMinSharedWork)
        continue;
      if (!block)
        block = rankc::declareGemm(b, module, "rankc_rt_cpu_gemm_block",
                                   /*block=*/true);
      shareBySlices(b, call, g, block, threads);
    }
    if (gemm.symbolKnownUseEmpty(module))
      gemm.erase();
  }
};

} // namespace
