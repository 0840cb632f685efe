//===- AssignMpiTags.cpp - the MPI tag of every message -------------------===//

#include "rankc/Analysis/CrossRankAnalysis.h"
#include "rankc/Dialect/Comm/Comm.h"
#include "rankc/Dialect/Comm/Transforms/Passes.h"

namespace rankc {
#define GEN_PASS_DEF_COMMASSIGNMPITAGS
#include "rankc/Dialect/Comm/Transforms/Passes.h.inc"
} // namespace rankc

using namespace mlir;

namespace {
struct AssignMpiTagsPass
    : public rankc::impl::CommAssignMpiTagsBase<AssignMpiTagsPass> {
  void runOnOperation() override {
    auto &analysis = getAnalysis<rankc::CrossRankAnalysis>();
    if (failed(analysis.graph))
      return signalPassFailure();
    Builder b(&getContext());
    auto tagOf = [&](Attribute tag) -> IntegerAttr {
      rankc::TagValue value;
      if (auto i = dyn_cast<IntegerAttr>(tag))
        value = i.getInt();
      else
        value = cast<StringAttr>(tag).str();
      return b.getI32IntegerAttr(analysis.graph->mpiTag(value));
    };
    getOperation().walk([&](Operation *op) {
      if (auto send = dyn_cast<rankc::comm::SendOp>(op))
        send.setMpiTagAttr(tagOf(send.getTag()));
      else if (auto recv = dyn_cast<rankc::comm::RecvOp>(op))
        recv.setMpiTagAttr(tagOf(recv.getTag()));
    });
    // Attributes only: the cross-rank graph stays valid.
    markAllAnalysesPreserved();
  }
};
} // namespace
