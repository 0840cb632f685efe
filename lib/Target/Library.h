//===- Library.h - the files of `--emit lib` besides the libraries -*- C++ -*-===//
//
// Internal to lib/Target: the C header of each program's library (written
// from the manifest the lowering embedded, so the header and the library
// cannot disagree) and the Python module.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_TARGET_LIBRARY_H
#define RANKC_LIB_TARGET_LIBRARY_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace rankc {

/// The manifest text of a lowered program module (its `rankc_manifest`
/// global), or empty.
std::string loweredManifest(mlir::ModuleOp module);

/// OUT/include/rankc_<program>.h, from the program's manifest.
std::string libraryHeader(llvm::StringRef program, llvm::StringRef manifest,
                          llvm::StringRef input);

/// OUT/python/rankc_program.py (python/rankc_program.py of the sources).
llvm::StringRef pythonModule();

} // namespace rankc

#endif // RANKC_LIB_TARGET_LIBRARY_H
