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
// Under --threads N (option `threads`), a GEMM large enough to pay for a
// fork of the threads is shared among them by rows of C: an scf.parallel
// of N iterations (OpenMP once convert-scf-to-openmp has run), each
// calling rankc_rt_cpu_gemm_rows on its rows with a single-threaded BLAS.
// Every element of C is still one BLAS dot product over all of K, so the
// results are those of one thread.
//
//===----------------------------------------------------------------------===//

#include "GemmMatch.h"
#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/Builders.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCCPULIBRARYCALLS
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// Multiply-adds below which a GEMM runs on one thread: below it the fork,
/// the join and the threads' waits at it cost more than the split saves
/// (2^20 made the exported transformer step no faster on 2 threads than
/// on 1; 2^22 made it 1.6x faster).
constexpr double kMinSharedWork = 1 << 22;

/// Replaces `call` (of rankc_rt_cpu_gemm, for the GEMM `g`) by an
/// scf.parallel over `threads` slices of C's rows, each a call of
/// `rows` (rankc_rt_cpu_gemm_rows) on rows [t * chunk, (t + 1) * chunk).
void shareByRows(OpBuilder &b, func::CallOp call, const rankc::Gemm &g,
                 func::FuncOp rows, int64_t threads) {
  Location loc = call.getLoc();
  int64_t slices = std::min(threads, g.m);
  int64_t chunk = (g.m + slices - 1) / slices;
  slices = (g.m + chunk - 1) / chunk; // no empty slice
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
        Value m0 = arith::MulIOp::create(nb, l, t, size);
        Value m1 = arith::AddIOp::create(nb, l, m0, size);
        SmallVector<Value> withRows(args);
        withRows.append({m0, m1}); // m1 past M on the last: the runtime clamps
        func::CallOp::create(nb, l, rows, withRows);
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
    func::FuncOp rows;
    for (auto [op, g] : gemms) {
      func::CallOp call =
          rankc::replaceByGemmCall(b, op, g, gemm, /*precision=*/0);
      double work = double(g.batch) * double(g.m) * double(g.n) * double(g.k);
      if (threads < 2 || g.m < 2 || work < kMinSharedWork)
        continue;
      if (!rows)
        rows = rankc::declareGemm(b, module, "rankc_rt_cpu_gemm_rows",
                                  /*rowRange=*/true);
      shareByRows(b, call, g, rows, threads);
    }
    if (gemm.symbolKnownUseEmpty(module))
      gemm.erase();
  }
};

} // namespace
