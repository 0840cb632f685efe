//===- ProgramModules.h - one program of a partitioned module --*- C++ -*-===//
//
// A partitioned module holds every program (a function with `comm.ranks`)
// and their parts (`comm.part_of`). Each program is lowered and built on
// its own, from a module of its own.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_TARGET_PROGRAMMODULES_H
#define RANKC_TARGET_PROGRAMMODULES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>
#include <vector>

namespace rankc {

/// The names of a partitioned module's programs (plan.json's executables).
std::vector<std::string> programNames(mlir::ModuleOp module);

/// A copy of `module` with the program `name` and its parts only.
mlir::OwningOpRef<mlir::ModuleOp> extractProgram(mlir::ModuleOp module,
                                                 llvm::StringRef name);

/// The micro-step of program `name` (comm-micro-steps: `accumulate` > 1)
/// as a program module of its own, like extractProgram's; null if it has
/// none.
mlir::OwningOpRef<mlir::ModuleOp> extractMicroStep(mlir::ModuleOp module,
                                                   llvm::StringRef name);

/// Renames what a lowered micro-step module defines, so that it links into
/// one executable with its program: rankc_entry and rankc_manifest become
/// rankc_micro_entry and rankc_micro_manifest (the runtime's), every other
/// definition gets the prefix "rankc_micro.". Linear in the module.
void prefixMicroStepSymbols(mlir::ModuleOp lowered);

} // namespace rankc

#endif // RANKC_TARGET_PROGRAMMODULES_H
