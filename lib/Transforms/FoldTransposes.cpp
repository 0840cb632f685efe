//===- FoldTransposes.cpp - transposes of transposes, folded -------------===//

#include "rankc/Transforms/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace rankc {
#define GEN_PASS_DEF_RANKCFOLDTRANSPOSES
#include "rankc/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {
struct FoldTransposesPass
    : public rankc::impl::RankcFoldTransposesBase<FoldTransposesPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    // t(t(x)) -> one transpose, which folds away when it is the identity.
    linalg::TransposeOp::getCanonicalizationPatterns(patterns, &getContext());
    // Only the transposes (and what the patterns make of them): every
    // other op stays as it is, where it is.
    SmallVector<Operation *> transposes;
    getOperation().walk(
        [&](linalg::TransposeOp op) { transposes.push_back(op); });
    GreedyRewriteConfig config;
    config.enableConstantCSE(false).setStrictness(
        GreedyRewriteStrictness::ExistingAndNewOps);
    (void)applyOpPatternsGreedily(transposes, std::move(patterns), config);
  }
};
} // namespace
