//===- PrintMLIR.h - the module as `.mlir` text -----------------*- C++ -*-===//
//
// What `--emit mlir` and `rankc import` write: the module with its
// locations (they name the DAG file, program and node, and survive a round
// trip through `.mlir`).
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TARGET_PRINTMLIR_H
#define RANKC_TARGET_PRINTMLIR_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

namespace rankc {

/// Modules of at most this many operations print as MLIR's printer prints
/// them (with #map and #loc aliases); larger ones a top-level op a thread.
constexpr int64_t kParallelPrintOps = int64_t(1) << 18;

/// Prints `module` (verified already) to `os`. Above kParallelPrintOps
/// operations every top-level op is printed on its own, on the context's
/// threads, with its locations and maps written where they are used (no
/// aliases: a node's location is used once, and the aliases' collection is
/// a second walk of the whole module on one thread); the text depends on
/// the module only, never on the number of threads.
void printMLIR(mlir::ModuleOp module, llvm::raw_ostream &os);

} // namespace rankc

#endif // RANKC_TARGET_PRINTMLIR_H
