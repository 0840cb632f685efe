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
#include "rankc/Support/DagLocations.h"

#include "mlir/IR/Location.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

namespace rankc::dag {

/// Location of `pos` in `file`, optionally inside a program and at a node
/// (with the node's DAG op, for messages that describe it).
mlir::Location makeLoc(mlir::MLIRContext *ctx, llvm::StringRef file, Pos pos,
                       const Program *program = nullptr,
                       llvm::StringRef nodeId = {}, llvm::StringRef op = {});

/// makeLoc for the many nodes of one program: the file, the program and the
/// dictionary's keys are uniqued once, not once a node (a 10^6-node import
/// made five string attributes a node, each hashed under the context's
/// lock). The same locations as makeLoc's.
class NodeLocations {
public:
  NodeLocations(mlir::MLIRContext *ctx, llvm::StringRef file,
                const Program &program);
  mlir::Location get(Pos pos, llvm::StringRef nodeId, llvm::StringRef op);

private:
  mlir::MLIRContext *ctx;
  mlir::StringAttr file, program, nodeKey, opKey, programKey;
  llvm::StringMap<mlir::StringAttr> ops;
};

} // namespace rankc::dag

#endif // RANKC_FRONTEND_DAGDIAGNOSTICS_H
