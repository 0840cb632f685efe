//===- DagProgramGraph.h - ProgramGraphs of a JSON document -----*- C++ -*-===//

#ifndef RANKC_FRONTEND_DAGPROGRAMGRAPH_H
#define RANKC_FRONTEND_DAGPROGRAMGRAPH_H

#include "rankc/Analysis/ProgramGraph.h"
#include "rankc/Frontend/Dag.h"

#include "mlir/IR/MLIRContext.h"

namespace rankc {

/// One graph per program of a document that checkDag accepted. The graphs
/// refer to `doc` for names and locations: it must outlive them.
std::vector<ProgramGraph> buildProgramGraphs(mlir::MLIRContext *ctx,
                                             const dag::Document &doc);

using dag::typeText;

} // namespace rankc

#endif // RANKC_FRONTEND_DAGPROGRAMGRAPH_H
