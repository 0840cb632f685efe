//===- LoadProgram.h - a rankc input file as a module -----------*- C++ -*-===//

#ifndef RANKC_FRONTEND_LOADPROGRAM_H
#define RANKC_FRONTEND_LOADPROGRAM_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/Timing.h"

namespace llvm {
class SourceMgr;
}

namespace rankc {

/// Loads `path`: a `.mlir` file as printed by `rankc compile --emit mlir`, or
/// else a JSON DAG document. Returns null after emitting diagnostics on
/// `ctx`. `sourceMgr` keeps the text alive for locations into it.
/// Each phase is timed under `timing` (see `rankc --timing`).
mlir::OwningOpRef<mlir::ModuleOp> loadProgram(mlir::MLIRContext *ctx,
                                              llvm::StringRef path,
                                              llvm::SourceMgr &sourceMgr,
                                              mlir::TimingScope &timing);

/// MLIR 22's custom parsers of linalg.transpose, broadcast and reduce
/// crash (a null attribute set after a failed parse) when what follows
/// `permutation =` or `dimensions =` is not a well-formed `[i, j, ...]`
/// (found by tools/rankc-fuzz). Such text is refused here, with an error
/// at the keyword, before the parser sees it. The generic form's
/// `array<i64: ...>` passes when well formed (a malformed one reaches the
/// same custom parsers).
mlir::LogicalResult refuseParserHazards(mlir::MLIRContext *ctx,
                                        llvm::StringRef text,
                                        llvm::StringRef file);

} // namespace rankc

#endif // RANKC_FRONTEND_LOADPROGRAM_H
