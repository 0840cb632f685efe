//===- DagChecker.h - rules of the DAG format -------------------*- C++ -*-===//
//
// Enforces every rule of dag-format.md that concerns one document: programs
// cover the ranks, ids resolve, the graph is acyclic, every op has the
// attributes and operand types it needs, shapes and dtypes are inferred (and
// agree with what a node states), outputs are well named. Cross-rank rules
// (matching messages, deadlock freedom) belong to lib/Analysis.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_FRONTEND_DAGCHECKER_H
#define RANKC_FRONTEND_DAGCHECKER_H

#include "rankc/Frontend/Dag.h"

#include "llvm/ADT/ArrayRef.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

namespace rankc::dag {

/// Checks `doc` and fills each node's inferred type and each program's
/// topological order. Emits a diagnostic and fails at the first violation.
mlir::LogicalResult checkDag(mlir::MLIRContext *ctx, Document &doc);

/// NumPy broadcasting of two shapes; nullopt when they do not broadcast.
std::optional<Shape> broadcastShapes(
    llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b);

/// The einsum spec, parsed: one letter string per operand and the output.
struct EinsumSpec {
  std::vector<std::string> inputs;
  std::string output;
};
std::optional<EinsumSpec> parseEinsum(std::string_view spec,
                                      std::string &error);

} // namespace rankc::dag

#endif // RANKC_FRONTEND_DAGCHECKER_H
