//===- InferenceRules.h - each op family's type rule ------------*- C++ -*-===//
//
// The checker (DagChecker.cpp) checks a node's keys and arity from the op
// table (Dag.h), then hands it to its family's rule, which checks its
// operands and attributes and infers its type: ElementwiseRules.cpp,
// ContractionRules.cpp, ReductionRules.cpp, ShapeRules.cpp,
// IndexingRules.cpp, WindowRules.cpp and CommRules.cpp. Adding an op is a
// line of the table, a case in its family's rule and its builder.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_FRONTEND_INFERENCERULES_H
#define RANKC_FRONTEND_INFERENCERULES_H

#include "rankc/Frontend/DagChecker.h"
#include "rankc/Frontend/DagDiagnostics.h"

#include "mlir/IR/Diagnostics.h"

namespace rankc::dag {

/// "[2, 3]": a shape in the checker's errors.
std::string shapeText(llvm::ArrayRef<int64_t> shape);

/// One node under inference: its program (whose earlier nodes are typed),
/// and the helpers every family's rule shares. Each reports at the node.
struct RuleContext {
  mlir::MLIRContext *ctx;
  const Document &doc;
  Program &program;
  Node &node;

  Node &arg(size_t i) { return program.nodes[node.args[i]]; }
  mlir::InFlightDiagnostic error();
  /// "'op' takes floats, got i32" unless `t` is a float.
  mlir::LogicalResult needFloat(DType t);
  /// `s` is a value of `t` ("a bool constant takes true and false only",
  /// "value 300 does not fit in u8"); `what` names it ("constant", "'fill'").
  mlir::LogicalResult checkScalarFits(const Scalar &s, DType t,
                                      const char *what);
  /// All operands of one dtype ("insert a 'cast'" otherwise).
  mlir::LogicalResult sameDTypes();
  /// The node's shape: its operands' from `first` on, broadcast.
  mlir::LogicalResult broadcastArgs(size_t first);
  /// No negative dimension, and a size that fits 64 bits.
  mlir::LogicalResult checkShape(llvm::ArrayRef<int64_t> s, const char *what);
  /// `axis` in [-rank, rank), made non-negative.
  mlir::LogicalResult normalizeAxis(int64_t &axis, size_t rank,
                                    const char *what);
};

/// Each fills node.outShape and node.outDType, or reports and fails.
mlir::LogicalResult inferLeaf(RuleContext &r);
mlir::LogicalResult inferElementwise(RuleContext &r);
mlir::LogicalResult inferContraction(RuleContext &r);
mlir::LogicalResult inferReduction(RuleContext &r);
mlir::LogicalResult inferShapeOp(RuleContext &r);
mlir::LogicalResult inferIndexing(RuleContext &r);
mlir::LogicalResult inferWindow(RuleContext &r);
mlir::LogicalResult inferComm(RuleContext &r);

} // namespace rankc::dag

#endif // RANKC_FRONTEND_INFERENCERULES_H
