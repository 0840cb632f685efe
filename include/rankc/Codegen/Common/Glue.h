//===- Glue.h - which functions are glue ------------------------*- C++ -*-===//
//
// rankc-optimize-none-glue marks the functions whose speed does not matter
// (a program's schedule, parts of little work) with LLVM's optnone; the
// passes and the build that treat glue apart recognize it by that mark.
//
//===----------------------------------------------------------------------===//

#ifndef RANKC_CODEGEN_COMMON_GLUE_H
#define RANKC_CODEGEN_COMMON_GLUE_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace rankc {

/// Whether `fn` is marked optnone, as rankc-optimize-none-glue writes it
/// (in its passthrough attributes) and LLVM reads it.
inline bool isGlueFunction(mlir::LLVM::LLVMFuncOp fn) {
  mlir::ArrayAttr passthrough = fn.getPassthroughAttr();
  return passthrough && llvm::any_of(passthrough, [](mlir::Attribute a) {
           auto s = llvm::dyn_cast<mlir::StringAttr>(a);
           return s && s.getValue() == "optnone";
         });
}

} // namespace rankc

#endif
