//===- DagDiagnostics.h - locations of DAG documents ------------*- C++ -*-===//
//
// A JSON node's location names the file, the program (by its ranks) and the
// node id: a FileLineColLoc fused with a {program, node} dictionary. The
// driver's diagnostic handler prints it as
//   error: dag.json:12:7: program [0], node 'x': message
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_FRONTEND_DAGDIAGNOSTICS_H
#define RANKC_FRONTEND_DAGDIAGNOSTICS_H

#include "rankc/Frontend/Dag.h"

#include "mlir/IR/Location.h"
#include "llvm/ADT/StringRef.h"

namespace rankc::dag {

/// Location of `pos` in `file`, optionally inside a program and at a node
/// (with the node's DAG op, for messages that describe it).
mlir::Location makeLoc(mlir::MLIRContext *ctx, llvm::StringRef file, Pos pos,
                       const Program *program = nullptr,
                       llvm::StringRef nodeId = {}, llvm::StringRef op = {});

/// The DAG node id and op of a location, or "" when it names none.
std::string dagNodeId(mlir::Location loc);
std::string dagOpName(mlir::Location loc);

/// The "program [0], node 'x'" part of a location, or "" when it has none.
std::string describeDagLoc(mlir::Location loc);

} // namespace rankc::dag

#endif // RANKC_FRONTEND_DAGDIAGNOSTICS_H
