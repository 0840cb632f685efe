//===- CpuParallelLoops.cpp - the loops a rank's threads share -------------===//
//
// `rankc compile --threads N` runs each rank's loop nests on N threads
// (OpenMP: upstream's convert-scf-to-openmp, then LLVM's OpenMP runtime).
// Which nests: a fork and join of the threads costs a few microseconds, so
// a nest is worth sharing only if it has enough iterations; the exported
// training steps have hundreds of small ones (biases, per-row statistics)
// beside a few large ones. This pass makes the choice per linalg op: large
// ones become an scf.parallel over their parallel loops (upstream's
// linalgOpToParallelLoops: the reduction loops stay sequential inside one
// thread, so sums are added in the same order whatever N), the rest the
// sequential loops linalg-to-loops would make.
//
//===----------------------------------------------------------------------===//

#include "rankc/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCCPUPARALLELLOOPS
#include "rankc/Codegen/CPU/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {

/// True if `op` has at least `minIterations` iterations in all and two
/// or more parallel ones (a nest of static bounds; a dynamic one stays
/// sequential).
bool worthSharing(linalg::LinalgOp op, int64_t minIterations) {
  SmallVector<int64_t> trips = op.getStaticLoopRanges();
  double all = 1, parallel = 1; // (no overflow for any loop bounds)
  for (auto [trip, kind] : llvm::zip(trips, op.getIteratorTypesArray())) {
    if (ShapedType::isDynamic(trip))
      return false;
    all *= double(trip);
    if (kind == utils::IteratorType::parallel)
      parallel *= double(trip);
  }
  return parallel >= 2 && all >= double(minIterations);
}

struct CpuParallelLoopsPass
    : public rankc::impl::RankcCpuParallelLoopsBase<CpuParallelLoopsPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureBufferSemantics())
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::LinalgOp op : ops) {
      rewriter.setInsertionPoint(op);
      FailureOr<linalg::LinalgLoops> loops =
          worthSharing(op, minIterations)
              ? linalg::linalgOpToParallelLoops(rewriter, op)
              : linalg::linalgOpToLoops(rewriter, op);
      if (failed(loops)) {
        op->emitOpError("cannot be lowered to loops");
        return signalPassFailure();
      }
      rewriter.eraseOp(op);
    }
  }
};

} // namespace
