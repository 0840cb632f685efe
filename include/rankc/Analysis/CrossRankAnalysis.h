//===- CrossRankAnalysis.h - the cross-rank graph of a module ---*- C++ -*-===//
//
// The CrossRankGraph of a comm-level module as an MLIR analysis, so that the
// passes of one pipeline share it (the verifier builds it, partitioning reads
// it) as long as the IR is unchanged.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_ANALYSIS_CROSSRANKANALYSIS_H
#define RANKC_ANALYSIS_CROSSRANKANALYSIS_H

#include "rankc/Analysis/CrossRankGraph.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/AnalysisManager.h"

namespace rankc {

struct CrossRankAnalysis {
  /// Builds and verifies; diagnostics go to the module's context.
  explicit CrossRankAnalysis(mlir::Operation *module);

  std::vector<mlir::func::FuncOp> programs; // functions with comm.ranks
  std::vector<ProgramGraph> graphs;         // one per program
  mlir::FailureOr<CrossRankGraph> graph;
};

} // namespace rankc

#endif // RANKC_ANALYSIS_CROSSRANKANALYSIS_H
