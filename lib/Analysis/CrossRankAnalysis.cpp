//===- CrossRankAnalysis.cpp - the cross-rank graph of a module -----------===//

#include "rankc/Analysis/CrossRankAnalysis.h"
#include "rankc/Dialect/Comm/Comm.h"

using namespace mlir;

rankc::CrossRankAnalysis::CrossRankAnalysis(Operation *op) : graph(failure()) {
  auto module = cast<ModuleOp>(op);
  auto worldSize =
      module->getAttrOfType<IntegerAttr>(comm::CommDialect::kWorldSize);
  if (!worldSize) {
    module.emitError("not a rankc module: the module has no 'comm.world_size'");
    return;
  }
  for (auto fn : module.getOps<func::FuncOp>()) {
    if (!fn->hasAttr(comm::CommDialect::kRanks))
      continue;
    programs.push_back(fn);
    graphs.push_back(buildProgramGraph(fn));
  }
  graph = CrossRankGraph::build(module.getContext(), worldSize.getInt(),
                                graphs);
}
