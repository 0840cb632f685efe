//===- DagImporter.h - checked Document to MLIR -----------------*- C++ -*-===//
//
// Builds the comm-level module of a checked document: one func.func per
// program, computation in tensor/linalg/arith/math, messages in comm.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_FRONTEND_DAGIMPORTER_H
#define RANKC_FRONTEND_DAGIMPORTER_H

#include "rankc/Frontend/Dag.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"

namespace rankc::dag {

/// Imports a document that checkDag accepted. The dialects it uses must be
/// loaded in `ctx` (see rankc/InitAllDialects.h).
mlir::OwningOpRef<mlir::ModuleOp> importDag(mlir::MLIRContext *ctx,
                                            const Document &doc);

/// Reads, checks and imports the JSON document at `path`: the whole frontend.
mlir::OwningOpRef<mlir::ModuleOp>
translateDagToMLIR(mlir::MLIRContext *ctx, llvm::StringRef path,
                   mlir::TimingScope &timing);

} // namespace rankc::dag

#endif // RANKC_FRONTEND_DAGIMPORTER_H
