//===- CpuMathApproximations.cpp - erf and tanh that vectorize -------------===//
//
// The CPU pipeline lowers math ops without an LLVM intrinsic that the
// vectorizer widens (erf, tanh) to libm calls, one element per call. For
// f32, upstream's polynomial approximations are as accurate as the tests'
// tolerances need (a few ulps) and are arith/math ops inside the loop body,
// so the loop vectorizes. This pass applies just those two patterns.
//
//===----------------------------------------------------------------------===//

#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Math/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCCPUMATHAPPROXIMATIONS
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {
struct CpuMathApproximationsPass
    : public rankc::impl::RankcCpuMathApproximationsBase<
          CpuMathApproximationsPass> {
  void runOnOperation() override {
    bool any = false;
    getOperation().walk([&](Operation *op) {
      any = any || isa<math::ErfOp, math::TanhOp>(op);
    });
    if (!any) // nothing to do costs nothing (issue 15)
      return;
    RewritePatternSet patterns(&getContext());
    populatePolynomialApproximateErfPattern(patterns);
    populatePolynomialApproximateTanhPattern(patterns);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
