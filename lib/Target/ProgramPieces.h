//===- ProgramPieces.h - a lowered program cut into modules ------*- C++ -*-===//
//
// Internal to lib/Target.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_LIB_TARGET_PROGRAMPIECES_H
#define RANKC_LIB_TARGET_PROGRAMPIECES_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <vector>

namespace rankc {

/// One module of a program's build.
struct ProgramPiece {
  mlir::ModuleOp module;
  /// Only glue (functions marked optnone): code generation at -O0, no -O3.
  bool glue = false;
  /// Operations in its function bodies: what its build costs, roughly.
  size_t ops = 0;
};

/// The pieces of a program; pieces[0].module is the program's own module.
struct ProgramPieces {
  std::vector<ProgramPiece> pieces;
  std::vector<mlir::OwningOpRef<mlir::ModuleOp>> owned;
};

/// How large a piece is: operations in its function bodies. A piece also
/// costs a target machine, declarations and an object to link, so not much
/// smaller; glue (FastISel, about 3x cheaper an operation) in larger ones.
struct PieceSizes {
  size_t glueOps = 30000;
  size_t optimizedOps = 10000;
  size_t maxGroups = 16;
};

/// Cuts the LLVM dialect module of one program into modules that are
/// translated, optimized and code-generated independently, on threads of
/// their own. Returns no pieces when the program is best built whole (small,
/// or holding top-level ops other than functions, globals and GPU binaries).
/// Functions move out of `program`; what stays (its globals, its binaries,
/// the functions that launch kernels, the first group of functions) is
/// piece 0. Each piece declares what it uses from the others, and a symbol
/// of local linkage used across pieces becomes hidden: linked between the
/// objects, never exported. The cut depends on the code only.
ProgramPieces cutIntoPieces(mlir::ModuleOp program,
                            const PieceSizes &sizes = PieceSizes());

} // namespace rankc

#endif
