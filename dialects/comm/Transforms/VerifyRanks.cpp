//===- VerifyRanks.cpp - verify communication across all ranks ------------===//

#include "rankc/Analysis/CrossRankAnalysis.h"
#include "rankc/Dialect/Comm/Transforms/Passes.h"

namespace rankc {
#define GEN_PASS_DEF_COMMVERIFYRANKS
#include "rankc/Dialect/Comm/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {
struct VerifyRanksPass
    : public rankc::impl::CommVerifyRanksBase<VerifyRanksPass> {
  void runOnOperation() override {
    // Building the analysis verifies; it stays cached for later passes.
    if (failed(getAnalysis<rankc::CrossRankAnalysis>().graph))
      return signalPassFailure();
    markAllAnalysesPreserved();
  }
};
} // namespace
