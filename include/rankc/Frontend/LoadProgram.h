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

} // namespace rankc

#endif // RANKC_FRONTEND_LOADPROGRAM_H
