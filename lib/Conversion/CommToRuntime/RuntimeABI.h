//===- RuntimeABI.h - what generated code and the runtime agree on -*- C++ -*-===//
//
// runtime/rankc_runtime.h seen from the compiler: the runtime's dtype codes,
// the byte size of a message, and the one program a module lowered for one
// executable holds; shared by the conversion and the manifest.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CONVERSION_COMMTORUNTIME_RUNTIMEABI_H
#define RANKC_CONVERSION_COMMTORUNTIME_RUNTIMEABI_H

#include "rankc/Dialect/Comm/Comm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace rankc {

/// The runtime's dtype code (rankc_runtime.h) of an element type.
inline int runtimeDTypeCode(mlir::Type t) {
  if (t.isInteger(1)) return 0;
  if (t.isInteger(8)) return 1;
  if (t.isInteger(32)) return 2;
  if (t.isInteger(64)) return 3;
  if (t.isF16()) return 4;
  if (t.isBF16()) return 5;
  if (t.isF32()) return 6;
  return 7;
}

/// Bytes of a tensor as messages carry it (bool: one byte an element).
inline int64_t messageBytes(mlir::RankedTensorType t) {
  unsigned bits = t.getElementType().getIntOrFloatBitWidth();
  return t.getNumElements() * (bits == 1 ? 1 : bits / 8);
}

/// The one program function of a module lowered for one executable (with
/// `comm.ranks`); null, with an error naming `pass`, when there is not
/// exactly one.
inline mlir::func::FuncOp onlyProgram(mlir::ModuleOp module,
                                      llvm::StringRef pass) {
  mlir::func::FuncOp program;
  unsigned found = 0;
  for (auto fn : module.getOps<mlir::func::FuncOp>())
    if (fn->hasAttr(comm::CommDialect::kRanks)) {
      program = fn;
      ++found;
    }
  if (found == 1)
    return program;
  module.emitError() << pass << " needs a module with one program function, "
                     << "found " << found;
  return {};
}

} // namespace rankc

#endif // RANKC_CONVERSION_COMMTORUNTIME_RUNTIMEABI_H
