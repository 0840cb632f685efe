//===- DagProgramGraph.h - ProgramGraphs of a JSON document -----*- C++ -*-===//

#ifndef RANKC_ANALYSIS_DAGPROGRAMGRAPH_H
#define RANKC_ANALYSIS_DAGPROGRAMGRAPH_H

#include "rankc/Analysis/ProgramGraph.h"
#include "rankc/Frontend/Dag.h"

#include "mlir/IR/MLIRContext.h"

namespace rankc {

/// One graph per program of a document that checkDag accepted. The graphs
/// refer to `doc` for names and locations: it must outlive them.
std::vector<ProgramGraph> buildProgramGraphs(mlir::MLIRContext *ctx,
                                             const dag::Document &doc);

/// "f32[4, 4]": how messages and the analysis name a tensor type.
std::string typeText(llvm::ArrayRef<int64_t> shape, llvm::StringRef dtype);

} // namespace rankc

#endif // RANKC_ANALYSIS_DAGPROGRAMGRAPH_H
