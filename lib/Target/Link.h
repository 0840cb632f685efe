//===- Link.h - object files to executables and shared libraries -*- C++ -*-===//
//
// Internal to lib/Target: the system C++ compiler as linker driver.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_TARGET_LINK_H
#define RANKC_LIB_TARGET_LINK_H

#include "mlir/IR/MLIRContext.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace rankc {

/// `objects` + the runtime `archive` + MPICH into the executable `exe`;
/// with `openmp` (the path of libomp.so.5: --threads), that too, found at
/// run time where it was found here (an rpath; LD_LIBRARY_PATH elsewhere).
mlir::LogicalResult linkExecutable(mlir::MLIRContext *ctx,
                                   llvm::ArrayRef<std::string> objects,
                                   llvm::StringRef archive,
                                   llvm::StringRef mpich, llvm::StringRef exe,
                                   llvm::StringRef openmp = {});

/// The same into the shared library `so`, which exports only the C API of
/// program `program` (rankc_<program>_*: the runtime's rankc_lib_* under
/// the program's prefix) and keeps everything else (the runtime, the
/// generated code) to itself, so that libraries of several programs can be
/// loaded into one process.
mlir::LogicalResult linkLibrary(mlir::MLIRContext *ctx,
                                llvm::ArrayRef<std::string> objects,
                                llvm::StringRef archive, llvm::StringRef mpich,
                                llvm::StringRef program, llvm::StringRef so,
                                llvm::StringRef openmp = {});

/// The C API's functions without their prefix (init, step, ...).
llvm::ArrayRef<const char *> libraryFunctions();

} // namespace rankc

#endif // RANKC_LIB_TARGET_LINK_H
