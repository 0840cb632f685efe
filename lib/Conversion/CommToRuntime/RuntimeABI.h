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
#include "rankc_runtime.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"

namespace rankc {

/// The runtime's dtype code (rankc_runtime.h's table) of an element type,
/// found by the DAG's name of the type; `isUnsigned` (`comm.unsigned`) makes
/// i8 and i32 u8 and u32 (i16 is u16 either way).
inline int runtimeDTypeCode(mlir::Type t, bool isUnsigned = false) {
  if (isUnsigned && t.isInteger(8))
    return RANKC_U8;
  if (isUnsigned && t.isInteger(32))
    return RANKC_U32;
  static const char *const names[] = {
#define RANKC_X(e, name, bytes, descr, ctype) name,
      RANKC_DTYPES(RANKC_X)
#undef RANKC_X
  };
  std::string name = comm::dtypeName(t);
  for (int code = 0; code < RANKC_DTYPE_COUNT; ++code)
    if (name == names[code])
      return code;
  return RANKC_F64;
}

// The comm dialect's reductions are the runtime's, in its order.
static_assert(int(comm::ReduceKind::sum) == RANKC_SUM &&
                  int(comm::ReduceKind::prod) == RANKC_PROD &&
                  int(comm::ReduceKind::max) == RANKC_MAX &&
                  int(comm::ReduceKind::min) == RANKC_MIN &&
                  int(comm::ReduceKind::mean) == RANKC_MEAN,
              "comm.allreduce's kinds follow rankc_runtime.h's RANKC_REDUCES");

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
