//===- Comm.h - the comm dialect --------------------------------*- C++ -*-===//
//
// Public header of the comm dialect: dialect, enums, attributes and ops.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_DIALECT_COMM_COMM_H
#define RANKC_DIALECT_COMM_COMM_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace rankc::comm {
/// The network that communication ops read and write (see CommBase.td).
struct NetworkResource
    : public mlir::SideEffects::Resource::Base<NetworkResource> {
  llvm::StringRef getName() override { return "comm.network"; }
};

/// Whether `tag` is a valid DAG tag: an integer in [0, 2^31) or a non-empty
/// string.
bool isValidTag(mlir::Attribute tag);

/// Prints a tag as the DAG wrote it: `7` or `"halo"`.
std::string tagToString(mlir::Attribute tag);

/// DAG node ids: `[A-Za-z_][A-Za-z0-9_.:-]*`.
bool isValidNodeId(llvm::StringRef id);

/// Output names become file names: `[A-Za-z0-9_.-]+`, but not "." or "..".
bool isValidOutputName(llvm::StringRef name);

/// The DAG format's name of an element type: bool, i8, ..., bf16, f32, f64.
std::string dtypeName(mlir::Type type);
} // namespace rankc::comm

#include "rankc/Dialect/Comm/CommDialect.h.inc"
#include "rankc/Dialect/Comm/CommEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "rankc/Dialect/Comm/CommAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "rankc/Dialect/Comm/CommTypes.h.inc"

#define GET_OP_CLASSES
#include "rankc/Dialect/Comm/CommOps.h.inc"

#endif // RANKC_DIALECT_COMM_COMM_H
