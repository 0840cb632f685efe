//===- ObjectFile.h - a lowered program to object files ---------*- C++ -*-===//
//
// Internal to lib/Target.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_TARGET_OBJECTFILE_H
#define RANKC_LIB_TARGET_OBJECTFILE_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/Timing.h"
#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace rankc {

/// The LLVM dialect module of one program as object files `base`.o,
/// `base`.1.o, ...: LLVM -O3 and code generation, each phase timed under
/// `timing`. A large program is cut into pieces first (ProgramPieces.h:
/// its functions move out of `module` into modules of their own), and the
/// pieces are translated, optimized and generated on the MLIR context's
/// threads; the pieces depend on the code only, so the objects are the
/// same bytes on any machine.
mlir::FailureOr<std::vector<std::string>>
emitObjects(mlir::ModuleOp module, llvm::StringRef base,
            mlir::TimingScope &timing, llvm::StringRef cpu);

} // namespace rankc

#endif
