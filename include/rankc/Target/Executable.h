//===- Executable.h - partitioned module to programs on disk ----*- C++ -*-===//
//
// `rankc compile --emit exe`: one executable per program (its module lowered
// to LLVM, emitted as object code in-process, linked with the runtime and
// MPICH), OUT/launch and OUT/plan.json.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TARGET_EXECUTABLE_H
#define RANKC_TARGET_EXECUTABLE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"

namespace rankc {

/// Writes the executables, launch and plan.json of a partitioned module into
/// the folder `out`. Everything is built in a sibling staging folder first:
/// on failure `out` is left as it was.
mlir::LogicalResult writeExecutables(mlir::ModuleOp module,
                                     llvm::StringRef out,
                                     mlir::TimingScope &timing,
                                     bool bulkSynchronous = false);

} // namespace rankc

#endif // RANKC_TARGET_EXECUTABLE_H
