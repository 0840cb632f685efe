//===- DagReader.h - JSON text to Document ----------------------*- C++ -*-===//
//
// Reads the JSON of a rankc-dag document: checks JSON syntax, the types of
// values and the names of keys (unknown keys are errors), and records where
// each node sits in the text. Meaning (names, shapes, dtypes) is the
// checker's job.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_FRONTEND_DAGREADER_H
#define RANKC_FRONTEND_DAGREADER_H

#include "rankc/Frontend/Dag.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LLVM.h"

namespace rankc::dag {

/// Parses `text`, the contents of `file`. Problems are emitted as MLIR
/// diagnostics on `ctx`; returns failure after the first one.
mlir::FailureOr<Document> readDag(mlir::MLIRContext *ctx, llvm::StringRef file,
                                  llvm::StringRef text);

/// Reads the file at `path` ("-": standard input) straight into simdjson's
/// padded buffer (one copy of the text, not two) and parses it.
mlir::FailureOr<Document> readDagFile(mlir::MLIRContext *ctx,
                                      llvm::StringRef path);

} // namespace rankc::dag

#endif // RANKC_FRONTEND_DAGREADER_H
