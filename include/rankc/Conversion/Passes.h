//===- Passes.h - rankc's conversions ---------------------------*- C++ -*-===//

#ifndef RANKC_CONVERSION_PASSES_H
#define RANKC_CONVERSION_PASSES_H

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace rankc {

#define GEN_PASS_DECL
#include "rankc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "rankc/Conversion/Passes.h.inc"

} // namespace rankc

#endif // RANKC_CONVERSION_PASSES_H
